// The run view. The run's data (see view.go, type data) holds one array per kind of
// mark; times are microseconds. The canvas is redrawn from it for the
// time window [t0, t1]; nothing else is kept between frames but the
// hit list for pointing.
"use strict";
(function () {
  // unpack reverses view.go's packing: flat rows of width numbers, each
  // decoded from its numbers and the previous decoded row.
  function unpack(flat, width, decode) {
    const rows = [];
    for (let i = 0; i + width <= flat.length; i += width) {
      rows.push(decode(flat.slice(i, i + width), rows.length ? rows[rows.length - 1] : null));
    }
    return rows;
  }
  // The data is JSON in a script element of its own: JSON.parse reads a
  // few megabytes several times faster than the same as a script literal.
  const R = JSON.parse(document.getElementById("run").textContent);
  // Messages: [sent, arrived, from, to, name, zxid]; durable points:
  // [t, member, zxid].
  R.msgs = unpack(R.msgs, 6, (raw, prev) => {
    const arrived = (prev ? prev[1] : 0) + raw[0];
    return [arrived - raw[1], arrived, raw[2], raw[3], raw[4], (prev ? prev[5] : 0) + raw[5]];
  });
  const undelta = (raw, prev) => [(prev ? prev[0] : 0) + raw[0], raw[1], (prev ? prev[2] : 0) + raw[2]];
  R.durable = unpack(R.durable, 3, undelta);
  R.fsyncs = unpack(R.fsyncs, 3, undelta); // [end, member, length]
  const canvas = document.getElementById("canvas");
  const ctx = canvas.getContext("2d");
  const detail = document.getElementById("detail");
  const scrub = document.getElementById("scrub");
  const clock = document.getElementById("clock");

  // The failure marker's colour is used for nothing else: the screenshot
  // test looks for it.
  const FAILURE = "#ff0000";
  const ROLE = { leading: "#5b8fd9", following: "#8cc084", observing: "#b7a3dc", looking: "#f2cf6b" };
  const OUTCOME_OK = "#3f9a4a", OUTCOME_UNKNOWN = "#9a9a9a", OUTCOME_ERROR = "#e8912d";
  const SYNC = new Set(["FOLLOWERINFO", "OBSERVERINFO", "LEADERINFO", "ACKEPOCH", "DIFF", "TRUNC", "SNAP", "NEWLEADER", "UPTODATE"]);

  function packetColour(name) {
    if (name === "PROPOSAL") return "rgba(40,90,200,A)";
    if (name === "ACK") return "rgba(30,140,60,A)";
    if (name === "COMMIT" || name === "INFORM") return "rgba(30,30,30,A)";
    if (SYNC.has(name)) return "rgba(220,110,0,A)";
    return "rgba(150,150,150,A)"; // PING, REVALIDATE, REQUEST, …
  }

  // Lanes: the network's, then members, then clients.
  const LANE_H = 26, TOP = 22, LEFT = 86;
  const lanes = [{ label: "network", kind: "net" }];
  const memberLane = new Map(), clientLane = new Map();
  for (const m of R.members) { memberLane.set(m, lanes.length); lanes.push({ label: "server " + m, kind: "member", id: m }); }
  for (const c of R.clients) { clientLane.set(c, lanes.length); lanes.push({ label: "client " + c, kind: "client", id: c }); }
  const laneY = (i) => TOP + i * LANE_H;
  const end = Math.max(R.end, 1);

  // Role bands per member: [from, to, role, phase, epoch, leader]; down
  // periods as [from, to].
  const bands = new Map(), downs = new Map();
  for (const m of R.members) { bands.set(m, []); downs.set(m, []); }
  {
    const cur = new Map(), downSince = new Map();
    const close = (m, t) => { const b = cur.get(m); if (b) { b[1] = t; bands.get(m).push(b); cur.delete(m); } };
    const events = [];
    for (const r of R.roles) events.push([r[0], 0, r]);
    for (const u of R.updown) events.push([u[0], 1, u]);
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    for (const [t, kind, e] of events) {
      const m = e[1];
      if (!bands.has(m)) continue;
      if (kind === 0) { close(m, t); cur.set(m, [t, end, e[2], e[3], e[4], e[5]]); }
      else if (e[2] === 0) { close(m, t); downSince.set(m, t); }
      else if (downSince.has(m)) { downs.get(m).push([downSince.get(m), t]); downSince.delete(m); }
    }
    for (const m of cur.keys()) close(m, end);
    for (const [m, t] of downSince) downs.get(m).push([t, end]);
  }

  let maxLatency = 0;
  for (const x of R.msgs) maxLatency = Math.max(maxLatency, x[1] - x[0]);
  for (const x of R.votes) maxLatency = Math.max(maxLatency, x[1] - x[0]);
  let maxOp = 0;
  for (const o of R.ops) maxOp = Math.max(maxOp, o[1] - o[0]);

  const opByID = new Map();
  for (const o of R.ops) opByID.set(o[7], o);
  for (const n of R.notices) opByID.set(n[4], [n[0], n[0]]);
  let highlighted = new Set();

  // The window and the cursor.
  let t0 = 0, t1 = end, cursor = 0;
  let width = 0, height = 0;
  function resize() {
    const dpr = window.devicePixelRatio || 1;
    width = canvas.clientWidth;
    height = TOP + lanes.length * LANE_H + 8;
    canvas.style.height = height + "px";
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    request();
  }
  const X = (t) => LEFT + (t - t0) / (t1 - t0) * (width - LEFT - 10);
  const T = (x) => t0 + (x - LEFT) / (width - LEFT - 10) * (t1 - t0);

  // First index i of rows (sorted by column col) with rows[i][col] >= t.
  function lowerBound(rows, col, t) {
    let lo = 0, hi = rows.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (rows[mid][col] < t) lo = mid + 1; else hi = mid; }
    return lo;
  }

  function fmt(t) {
    const s = Math.floor(t / 1e6), us = Math.round(t % 1e6);
    return s + "." + String(us).padStart(6, "0") + "s";
  }
  const hex = (z) => "0x" + Number(z).toString(16);

  // What is drawn, for pointing: boxes or lines, each with a function
  // that describes it (built only when pointed at: a frame draws
  // tens of thousands of marks).
  let hits = [];
  let pending = false;
  function request() { if (!pending) { pending = true; requestAnimationFrame(draw); } }

  function draw() {
    pending = false;
    hits = [];
    ctx.clearRect(0, 0, width, height);
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    // Lanes and labels.
    for (let i = 0; i < lanes.length; i++) {
      const y = laneY(i);
      ctx.fillStyle = i % 2 ? "#fafafa" : "#f3f3f3";
      ctx.fillRect(LEFT, y, width - LEFT, LANE_H);
      ctx.fillStyle = "#333";
      ctx.fillText(lanes[i].label, 6, y + LANE_H / 2);
    }
    axis();
    drawCuts();
    drawBands();
    drawMessages();
    drawFsyncs();
    drawDurable();
    drawUpDown();
    drawFaults();
    drawOps();
    drawFailures();
    // Cursor.
    const cx = X(cursor);
    if (cx >= LEFT && cx <= width) {
      ctx.strokeStyle = "rgba(0,0,0,0.55)";
      ctx.setLineDash([4, 3]);
      ctx.beginPath(); ctx.moveTo(cx, TOP); ctx.lineTo(cx, height); ctx.stroke();
      ctx.setLineDash([]);
    }
    clock.textContent = fmt(cursor) + "  (" + fmt(t0) + " – " + fmt(t1) + ")";
    scrub.value = String(Math.round(cursor / end * 1000));
    // From the start of navigation to the first frame drawn: how long the
    // page takes to open (the screenshot test reports it).
    if (!document.body.dataset.renderMs) document.body.dataset.renderMs = String(Math.round(performance.now()));
  }

  function axis() {
    const span = t1 - t0;
    // The largest round step (1, 2 or 5 times a power of ten) that
    // leaves at least six ticks in the window.
    let step = 1;
    for (let p = 1; p <= span; p *= 10) for (const s of [1, 2, 5]) { if (span / (s * p) >= 6) step = s * p; }
    ctx.fillStyle = "#666";
    ctx.strokeStyle = "#e2e2e2";
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = X(t);
      ctx.beginPath(); ctx.moveTo(x, TOP - 4); ctx.lineTo(x, height); ctx.stroke();
      const label = step >= 1e6 ? (t / 1e6) + "s" : step >= 1e3 ? (t / 1e3) + "ms" : t + "µs";
      ctx.fillText(label, x + 2, TOP - 10);
    }
  }

  function visible(a, b) { return b >= t0 && a <= t1; }

  function drawCuts() {
    const y = laneY(0);
    for (const c of R.cuts) {
      if (!visible(c[0], c[1])) continue;
      const x0 = Math.max(LEFT, X(c[0])), x1 = Math.min(width, X(c[1]));
      ctx.fillStyle = "rgba(230,120,20,0.18)";
      ctx.fillRect(x0, TOP, x1 - x0, lanes.length * LANE_H);
      ctx.fillStyle = "rgba(230,120,20,0.85)";
      ctx.fillRect(x0, y + 4, Math.max(2, x1 - x0), LANE_H - 8);
      hits.push({ x0, x1, y0: y, y1: y + LANE_H, text: () => "partition from " + fmt(c[0]) + " to " + fmt(c[1]) + ": " + c[2] });
    }
  }

  function drawBands() {
    for (const m of R.members) {
      const y = laneY(memberLane.get(m));
      for (const b of bands.get(m)) {
        if (!visible(b[0], b[1])) continue;
        const x0 = Math.max(LEFT, X(b[0])), x1 = Math.min(width, X(b[1]));
        ctx.fillStyle = ROLE[b[2]] || "#ccc";
        ctx.fillRect(x0, y + 3, Math.max(1, x1 - x0), LANE_H - 6);
        if (x1 - x0 > 60) {
          ctx.fillStyle = "#111";
          ctx.fillText(b[2] + " e" + b[4], x0 + 3, y + LANE_H / 2);
        }
        hits.push({ x0, x1, y0: y, y1: y + LANE_H, weak: true,
          text: () => "server " + m + ": " + b[2] + " (" + b[3] + "), epoch " + b[4] + (b[5] ? ", leader " + b[5] : "") + "\nfrom " + fmt(b[0]) + " to " + fmt(b[1]) });
      }
      for (const d of downs.get(m)) {
        if (!visible(d[0], d[1])) continue;
        const x0 = Math.max(LEFT, X(d[0])), x1 = Math.min(width, X(d[1]));
        ctx.fillStyle = "#d0d0d0";
        ctx.fillRect(x0, y + 3, Math.max(1, x1 - x0), LANE_H - 6);
        hits.push({ x0, x1, y0: y, y1: y + LANE_H, weak: true, text: () => "server " + m + " down from " + fmt(d[0]) + " to " + fmt(d[1]) });
      }
    }
  }

  function arrow(x0, y0, x1, y1) {
    ctx.beginPath(); ctx.moveTo(x0, y0); ctx.lineTo(x1, y1); ctx.stroke();
    if (x1 - x0 > 6 || Math.abs(y1 - y0) > 6) {
      const a = Math.atan2(y1 - y0, x1 - x0);
      ctx.beginPath();
      ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - 5 * Math.cos(a - 0.4), y1 - 5 * Math.sin(a - 0.4));
      ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - 5 * Math.cos(a + 0.4), y1 - 5 * Math.sin(a + 0.4));
      ctx.stroke();
    }
  }

  const MAX_ARROWS = 6000;
  function drawMessages() {
    const rows = [];
    for (let i = lowerBound(R.msgs, 1, t0); i < R.msgs.length && R.msgs[i][0] <= t1 + maxLatency; i++) {
      if (R.msgs[i][0] <= t1) rows.push(R.msgs[i]);
    }
    const every = Math.max(1, Math.ceil(rows.length / MAX_ARROWS));
    const alpha = every > 1 ? "0.35" : "0.8";
    ctx.lineWidth = 1;
    for (let k = 0; k < rows.length; k += every) {
      const r = rows[k], name = R.names[r[4]];
      const y0 = laneY(memberLane.get(r[2])) + LANE_H / 2, y1 = laneY(memberLane.get(r[3])) + LANE_H / 2;
      const x0 = X(r[0]), x1 = X(r[1]);
      ctx.strokeStyle = packetColour(name).replace("A", alpha);
      arrow(x0, y0, x1, y1);
      hits.push({ line: [x0, y0, x1, y1], text: () => name + (r[5] ? " " + hex(r[5]) : "") + " from server " + r[2] + " to " + r[3] + "\nsent " + fmt(r[0]) + ", arrived " + fmt(r[1]) });
    }
    ctx.setLineDash([3, 2]);
    ctx.strokeStyle = "rgba(130,60,170,0.8)";
    for (let i = lowerBound(R.votes, 1, t0); i < R.votes.length && R.votes[i][0] <= t1 + maxLatency; i++) {
      const v = R.votes[i];
      if (v[0] > t1) continue;
      const y0 = laneY(memberLane.get(v[2])) + LANE_H / 2, y1 = laneY(memberLane.get(v[3])) + LANE_H / 2;
      const x0 = X(v[0]), x1 = X(v[1]);
      arrow(x0, y0, x1, y1);
      hits.push({ line: [x0, y0, x1, y1], text: () => "vote from server " + v[2] + " to " + v[3] + ": " + v[4] + "\nsent " + fmt(v[0]) + ", arrived " + fmt(v[1]) });
    }
    ctx.setLineDash([]);
    if (every > 1) {
      ctx.fillStyle = "#555";
      ctx.fillText("one packet in " + every + " drawn: zoom in for all", LEFT + 4, height - 6);
    }
  }

  // Disk jobs (appends and their fsync) as a thin bar under the lane.
  let maxFsync = 0;
  for (const f of R.fsyncs) maxFsync = Math.max(maxFsync, f[2]);
  function drawFsyncs() {
    ctx.fillStyle = "rgba(90,60,20,0.55)";
    for (let i = lowerBound(R.fsyncs, 0, t0); i < R.fsyncs.length && R.fsyncs[i][0] <= t1 + maxFsync; i++) {
      const f = R.fsyncs[i], start = f[0] - f[2];
      if (start > t1) continue;
      const y = laneY(memberLane.get(f[1])) + LANE_H - 3;
      const x0 = Math.max(LEFT, X(start)), x1 = Math.min(width, X(f[0]));
      ctx.fillRect(x0, y, Math.max(1, x1 - x0), 2);
      hits.push({ x0, x1: Math.max(x1, x0 + 2), y0: y - 2, y1: y + 3, weak: true, text: () => "server " + f[1] + ": disk job (appends, fsync) from " + fmt(start) + " to " + fmt(f[0]) + " (" + f[2] + " µs)" });
    }
  }

  function drawDurable() {
    ctx.strokeStyle = "rgba(0,0,0,0.45)";
    const shown = new Map();
    for (let i = lowerBound(R.durable, 0, t0); i < R.durable.length && R.durable[i][0] <= t1; i++) {
      const d = R.durable[i], x = X(d[0]), y = laneY(memberLane.get(d[1]));
      const key = d[1] + ":" + Math.round(x);
      if (shown.has(key)) continue;
      shown.set(key, true);
      ctx.beginPath(); ctx.moveTo(x, y + LANE_H - 8); ctx.lineTo(x, y + LANE_H - 2); ctx.stroke();
      hits.push({ x0: x - 2, x1: x + 2, y0: y + LANE_H - 9, y1: y + LANE_H, text: () => "server " + d[1] + ": log durable to " + hex(d[2]) + " at " + fmt(d[0]) });
    }
  }

  function drawUpDown() {
    for (const u of R.updown) {
      if (u[0] < t0 || u[0] > t1) continue;
      const x = X(u[0]), y = laneY(memberLane.get(u[1])) + LANE_H / 2;
      ctx.lineWidth = 2;
      if (u[2] === 0) {
        ctx.strokeStyle = "#a00020";
        ctx.beginPath(); ctx.moveTo(x - 5, y - 5); ctx.lineTo(x + 5, y + 5); ctx.moveTo(x + 5, y - 5); ctx.lineTo(x - 5, y + 5); ctx.stroke();
      } else {
        ctx.fillStyle = "#1d7a2e";
        ctx.beginPath(); ctx.moveTo(x, y - 6); ctx.lineTo(x + 7, y); ctx.lineTo(x, y + 6); ctx.closePath(); ctx.fill();
      }
      ctx.lineWidth = 1;
      hits.push({ x0: x - 6, x1: x + 7, y0: y - 7, y1: y + 7, text: () => "server " + u[1] + (u[2] ? " started: " : " crashed: ") + u[3] + "\nat " + fmt(u[0]) });
    }
  }

  function drawFaults() {
    for (const f of R.faults) {
      if (f[0] < t0 || f[0] > t1) continue;
      const lane = f[1] && memberLane.has(f[1]) ? memberLane.get(f[1]) : 0;
      const x = X(f[0]), y = laneY(lane) + LANE_H / 2;
      ctx.fillStyle = "#d35400";
      ctx.beginPath(); ctx.moveTo(x, y - 6); ctx.lineTo(x + 5, y); ctx.lineTo(x, y + 6); ctx.lineTo(x - 5, y); ctx.closePath(); ctx.fill();
      hits.push({ x0: x - 6, x1: x + 6, y0: y - 7, y1: y + 7, text: () => "fault at " + fmt(f[0]) + ": " + f[2] });
    }
  }

  function drawOps() {
    const from = lowerBound(R.ops, 1, t0);
    for (let i = from; i < R.ops.length && R.ops[i][0] <= t1 + maxOp; i++) {
      const o = R.ops[i];
      if (o[0] > t1) continue;
      const y = laneY(clientLane.get(o[2]));
      const x0 = Math.max(LEFT, X(o[0])), x1 = Math.min(width, X(o[1]));
      ctx.fillStyle = o[5] === "ok" ? OUTCOME_OK : o[5] === "unknown" ? OUTCOME_UNKNOWN : OUTCOME_ERROR;
      ctx.fillRect(x0, y + 6, Math.max(1.5, x1 - x0), LANE_H - 12);
      if (highlighted.has(o[7])) {
        ctx.strokeStyle = "#7b00c9"; ctx.lineWidth = 3;
        ctx.strokeRect(x0 - 2, y + 3, Math.max(1.5, x1 - x0) + 4, LANE_H - 6);
        ctx.lineWidth = 1;
      }
      hits.push({ x0: x0 - 1, x1: x1 + 1, y0: y + 4, y1: y + LANE_H - 4,
        text: () => "client " + o[2] + " op " + o[7] + ": " + R.names[o[3]] + " " + o[4] + " → " + o[5] + (o[6] ? " zxid " + hex(o[6]) : "") + "\ncalled " + fmt(o[0]) + ", returned " + fmt(o[1]) });
    }
    ctx.fillStyle = "#444";
    for (let i = lowerBound(R.notices, 0, t0); i < R.notices.length && R.notices[i][0] <= t1; i++) {
      const n = R.notices[i], x = X(n[0]), y = laneY(clientLane.get(n[1])) + LANE_H - 4;
      const r = highlighted.has(n[4]) ? 5 : 2;
      ctx.fillRect(x - r, y - r, 2 * r, 2 * r);
      hits.push({ x0: x - 3, x1: x + 3, y0: y - 3, y1: y + 3, text: () => "client " + n[1] + " event " + n[2] + " " + n[3] + " at " + fmt(n[0]) });
    }
  }

  function drawFailures() {
    let labelledUpTo = -Infinity; // labels do not overlap: a line without one is a failure too
    for (const f of R.failures) {
      if (f[0] < t0 || f[0] > t1) continue;
      const x = Math.round(X(f[0])) + 0.5;
      ctx.strokeStyle = FAILURE; ctx.lineWidth = 3;
      ctx.beginPath(); ctx.moveTo(x, TOP - 18); ctx.lineTo(x, height); ctx.stroke();
      ctx.lineWidth = 1;
      if (x > labelledUpTo) {
        const label = "FAILURE " + f[1];
        ctx.fillStyle = FAILURE;
        ctx.fillText(label, Math.min(x + 4, width - 160), TOP - 10);
        labelledUpTo = x + 8 + ctx.measureText(label).width;
      }
      hits.push({ x0: x - 4, x1: x + 4, y0: 0, y1: height, text: () => "FAILURE " + f[1] + " at " + fmt(f[0]) + "\n" + f[2] });
    }
  }

  // Pointing: the smallest mark under the pointer, a line within 3 pixels.
  function hitAt(px, py) {
    let best = null, bestWeak = null;
    for (const h of hits) {
      if (h.line) {
        const [x0, y0, x1, y1] = h.line;
        const dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy || 1;
        const u = Math.max(0, Math.min(1, ((px - x0) * dx + (py - y0) * dy) / len2));
        const ex = x0 + u * dx - px, ey = y0 + u * dy - py;
        if (ex * ex + ey * ey <= 9) best = h;
      } else if (px >= h.x0 && px <= h.x1 && py >= h.y0 && py <= h.y1) {
        if (h.weak) bestWeak = h; else best = h;
      }
    }
    return best || bestWeak;
  }

  function setWindow(a, b) {
    const span = Math.max(20, b - a);
    a = Math.max(0, Math.min(a, end - span));
    t0 = a; t1 = Math.min(end, a + span);
    request();
  }

  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const at = T(ev.offsetX), k = ev.deltaY > 0 ? 1.25 : 0.8;
    setWindow(at - (at - t0) * k, at + (t1 - at) * k);
  }, { passive: false });
  let drag = null;
  canvas.addEventListener("mousedown", (ev) => { drag = { x: ev.offsetX, t0, t1, moved: false }; });
  window.addEventListener("mouseup", (ev) => {
    if (drag && !drag.moved) {
      const r = canvas.getBoundingClientRect();
      cursor = Math.max(0, Math.min(end, T(ev.clientX - r.left)));
      request();
    }
    drag = null;
  });
  canvas.addEventListener("mousemove", (ev) => {
    if (drag) {
      const dx = ev.offsetX - drag.x;
      if (Math.abs(dx) > 2) drag.moved = true;
      const dt = dx / (width - LEFT - 10) * (drag.t1 - drag.t0);
      setWindow(drag.t0 - dt, drag.t1 - dt);
      return;
    }
    const h = hitAt(ev.offsetX, ev.offsetY);
    if (h) detail.textContent = h.text();
  });
  scrub.addEventListener("input", () => {
    cursor = Number(scrub.value) / 1000 * end;
    const span = t1 - t0;
    if (cursor < t0 || cursor > t1) setWindow(cursor - span / 2, cursor + span / 2);
    request();
  });
  window.addEventListener("keydown", (ev) => {
    const span = t1 - t0;
    if (ev.key === "ArrowRight") setWindow(t0 + span / 5, t1 + span / 5);
    else if (ev.key === "ArrowLeft") setWindow(t0 - span / 5, t1 - span / 5);
    else if (ev.key === "+" || ev.key === "=") setWindow(t0 + span / 4, t1 - span / 4);
    else if (ev.key === "-") setWindow(t0 - span / 2, t1 + span / 2);
  });
  document.getElementById("all").addEventListener("click", () => setWindow(0, end));
  window.addEventListener("resize", resize);

  // Legend and the failure list.
  const legend = document.getElementById("legend");
  const swatch = (colour, text) => { const s = document.createElement("span"); const i = document.createElement("i"); i.style.background = colour; s.append(i, text); legend.append(s); };
  for (const [role, colour] of Object.entries(ROLE)) swatch(colour, role);
  swatch("#d0d0d0", "down");
  swatch("rgba(90,60,20,0.55)", "disk job");
  swatch(OUTCOME_OK, "op ok");
  swatch(OUTCOME_ERROR, "op error");
  swatch(OUTCOME_UNKNOWN, "op outcome unknown");
  swatch("rgb(40,90,200)", "PROPOSAL");
  swatch("rgb(30,140,60)", "ACK");
  swatch("rgb(30,30,30)", "COMMIT");
  swatch("rgb(220,110,0)", "sync");
  swatch("rgb(130,60,170)", "vote");
  if (R.failures.length) swatch(FAILURE, "failure");
  const list = document.getElementById("failures");
  R.failures.forEach((f) => {
    const div = document.createElement("div");
    div.textContent = "FAILURE " + f[1] + " at " + fmt(f[0]) + ": " + f[2].split("\n")[0].slice(0, 300);
    div.addEventListener("click", () => {
      highlighted = new Set(f[3]);
      let a = f[0], b = f[0];
      for (const id of f[3]) { const o = opByID.get(id); if (o) { a = Math.min(a, o[0]); b = Math.max(b, o[1]); } }
      const pad = Math.max(2000, (b - a) * 0.2);
      cursor = f[0];
      setWindow(a - pad, b + pad);
      detail.textContent = "FAILURE " + f[1] + " at " + fmt(f[0]) + "\n" + f[2] + (f[3].length ? "\noperations involved (outlined): " + f[3].join(", ") : "");
    });
    if (f[4] >= 0) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = "Porcupine's view";
      button.addEventListener("click", (ev) => {
        ev.stopPropagation();
        const url = URL.createObjectURL(new Blob([R.attached[f[4]]], { type: "text/html" }));
        window.open(url, "_blank");
      });
      div.append(button);
    }
    list.append(div);
  });
  // A window in the address: page.html#8.1-8.6 opens on seconds 8.1 to
  // 8.6 (to share a view, or to take a picture of one).
  const asked = /^#([\d.]+)-([\d.]+)$/.exec(location.hash);
  if (asked) { cursor = Number(asked[1]) * 1e6; setWindow(cursor, Number(asked[2]) * 1e6); }
  resize();
})();
