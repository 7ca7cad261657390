package linearizability

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestReferenceWitnessExplainsItsRun: the txns a correct server committed
// explain its history — with lost replies, applied or not — in one linear
// replay, for the writes and the reads checkers alike.
func TestReferenceWitnessExplainsItsRun(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h, w := referenceRun(rapidChooser{t}, rapid.IntRange(1, 6).Draw(t, "clients"), rapid.IntRange(1, 80).Draw(t, "ops"),
			rapid.IntRange(1, 3).Draw(t, "keys"), rapid.IntRange(2, 8).Draw(t, "lossOneIn"))
		for _, reads := range []bool{false, true} {
			require.Empty(t, buildTimeline(h, reads, false).replayWitnessed(w), "reads: %v", reads)
		}
	})
}

// TestWitnessNeverPassesAFailure: whatever the witness says — the true one,
// or one with a txn dropped, moved, swapped with another, turned into an
// error or given to another request — a history it explains is one the
// exhaustive search passes, also when a reply of the history was changed.
// (A witness can only decide what the search could not; see witness.go.)
func TestWitnessNeverPassesAFailure(t *testing.T) {
	explained := 0
	rapid.Check(t, func(t *rapid.T) {
		h, w := referenceRun(rapidChooser{t}, rapid.IntRange(1, 5).Draw(t, "clients"), rapid.IntRange(1, 50).Draw(t, "ops"),
			rapid.IntRange(1, 3).Draw(t, "keys"), rapid.IntRange(2, 6).Draw(t, "lossOneIn"))
		if rapid.Bool().Draw(t, "mutate history") {
			mutateReply(t, h)
		}
		w = perturbWitness(t, w)
		deadline := time.Now().Add(time.Minute)
		for _, reads := range []bool{false, true} {
			if buildTimeline(h, reads, false).replayWitnessed(w) != "" {
				continue
			}
			explained++
			vs := checkTimeline(buildTimeline(h, reads, false), GuaranteeWrites, deadline, func(*tlOp) bool { return true })
			require.Empty(t, vs, "the witness explains a history the search fails (reads: %v)", reads)
		}
	})
	require.Positive(t, explained, "no witness explained any history: the property was never exercised")
}

// perturbWitness returns w, or a copy with one txn changed.
func perturbWitness(t *rapid.T, w Witness) Witness {
	if len(w) == 0 {
		return w
	}
	out := append(Witness(nil), w...)
	i := rapid.IntRange(0, len(out)-1).Draw(t, "txn")
	switch rapid.IntRange(0, 5).Draw(t, "perturbation") {
	case 1: // lost
		out = append(out[:i], out[i+1:]...)
	case 2: // committed at another zxid
		out[i].Zxid += Hex64(rapid.IntRange(-3, 3).Draw(t, "shift"))
	case 3: // two txns swap places
		j := rapid.IntRange(0, len(out)-1).Draw(t, "other")
		out[i].Zxid, out[j].Zxid = out[j].Zxid, out[i].Zxid
	case 4: // failed
		out[i].Op = witnessError
	case 5: // another request's
		out[i].Xid += int32(rapid.IntRange(-2, 2).Draw(t, "xid"))
	}
	return out
}

// TestWitnessDecidesManyLostWrites: forty setData calls of unknown outcome
// on one node, read back at versions for which the search has to count
// subsets (alone it is undecided after seconds), are explained at once by
// the server's order; a witness some reply contradicts explains nothing.
func TestWitnessDecidesManyLostWrites(t *testing.T) {
	b := newBuilder()
	w := Witness{}
	zxid := int64(1)
	b.op(0, session(0), OpCreate, "/a", ErrOK, zxid, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/a" })
	w = append(w, WitnessTxn{Zxid: Hex64(zxid), Session: Hex64(session(0)), Xid: 1, Op: OpCreate})
	version := int32(0)
	for i := range 40 {
		c := 1 + i%4
		b.lost(c, session(c), OpSetData, "/a", func(e *Entry) { e.Data, e.Version = str(strings.Repeat("x", i)), ver(-1) })
		if i%3 != 0 { // two in three took effect
			zxid++
			version++
			w = append(w, WitnessTxn{Zxid: Hex64(zxid), Session: Hex64(session(c)), Xid: int32(b.seq[c]), Op: OpSetData})
		}
		if i%5 == 4 {
			v, data := version, strings.Repeat("x", lastApplied(i))
			b.op(5, session(5), OpGetData, "/a", ErrOK, zxid, func(e *Entry) {
				e.Data, e.Stat = str(data), &Stat{Czxid: 1, Mzxid: Hex64(zxid), Pzxid: 1, Version: v, DataLength: int32(len(data))}
			})
		}
	}
	h := b.h
	require.NoError(t, h.Validate())
	tl := buildTimeline(h, true, false)
	require.Empty(t, tl.replayWitnessed(w))
	r := CheckAll(h, Options{Witness: w})
	require.True(t, r.OK())
	require.NoError(t, r.Unexplained)

	// A witness whose order some reply contradicts explains nothing (the
	// checkers then search).
	bad := append(Witness(nil), w...)
	bad[3].Op = witnessError
	require.NotEmpty(t, tl.replayWitnessed(bad))

	// A read no order explains is explained by no witness either.
	h[len(h)-1].Data = str("never written")
	require.NotEmpty(t, buildTimeline(h, true, false).replayWitnessed(w))
}

// lastApplied is the index of the latest of the first i+1 setData calls of
// TestWitnessDecidesManyLostWrites that took effect.
func lastApplied(i int) int {
	for ; i%3 == 0; i-- {
	}
	return i
}

// TestUnexplainedHistoryIsSearched: a witness that says a lost setData
// failed, where a later read shows its data, does not explain the history;
// the report says so, and the search passes the history all the same.
func TestUnexplainedHistoryIsSearched(t *testing.T) {
	b := newBuilder()
	b.op(1, session(1), OpCreate, "/a", ErrOK, 1, func(e *Entry) { e.Data, e.Mode, e.Created = str(""), "persistent", "/a" })
	b.lost(1, session(1), OpSetData, "/a", func(e *Entry) { e.Data, e.Version = str("v"), ver(-1) })
	b.op(2, session(2), OpGetData, "/a", ErrOK, 2, func(e *Entry) {
		e.Data, e.Stat = str("v"), &Stat{Czxid: 1, Mzxid: 2, Pzxid: 1, Version: 1, DataLength: 1}
	})
	h := b.h
	w := Witness{{Zxid: 1, Session: Hex64(session(1)), Xid: 1, Op: OpCreate}, {Zxid: 2, Session: Hex64(session(1)), Xid: 2, Op: OpSetData}}
	r := CheckAll(h, Options{Witness: w})
	require.True(t, r.OK())
	require.NoError(t, r.Unexplained)

	w[1].Op = witnessError
	r = CheckAll(h, Options{Witness: w})
	require.True(t, r.OK(), "the search finds the order the witness denies")
	require.ErrorContains(t, r.Unexplained, "the committed txns in zxid order do not explain the history: getData /a")
	require.Error(t, w.Explains(h, Options{}))
}

func TestWitnessFileRoundTrip(t *testing.T) {
	w := Witness{
		{Zxid: 0x100000001, Session: 0x5, Xid: 3, Op: "create"},
		{Zxid: 0x100000002, Op: "deleteContainer", Path: "/a/c"},
		{Zxid: 0x100000003, Session: 0x5, Op: "closeSession"},
	}
	var buf bytes.Buffer
	require.NoError(t, WriteWitness(&buf, w))
	back, err := ReadWitness(&buf, "w.jsonl")
	require.NoError(t, err)
	require.Equal(t, w, back)

	for in, want := range map[string]string{
		`{"zxid":"0x2","op":"create"}` + "\n" + `{"zxid":"0x1","op":"create"}`: `witness w.jsonl:2: field "zxid": 0x1 does not follow 0x2`,
		`{"zxid":"0x2"}`:                `witness w.jsonl:1: field "op": missing`,
		`{"zxid":"0x2","op":"x","y":1}`: `witness w.jsonl:1: json: unknown field "y"`,
		`{"zxid":2,"op":"create"}`:      `witness w.jsonl:1:`,
		`not json`:                      `witness w.jsonl:1:`,
	} {
		_, err := ReadWitness(strings.NewReader(in), "w.jsonl")
		require.ErrorContains(t, err, want, in)
	}
}

// FuzzReadWitness: any input is read or refused with an error, never a
// panic; what is read writes back to the same witness, and checking a
// small history with it does not panic either.
func FuzzReadWitness(f *testing.F) {
	f.Add([]byte(`{"zxid":"0x1","session":"0x5","xid":3,"op":"create"}` + "\n" + `{"zxid":"0x2","op":"deleteContainer","path":"/a"}`))
	f.Add([]byte(`{"zxid":"0x3","session":"0x5","op":"closeSession"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ReadWitness(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		var out bytes.Buffer
		require.NoError(t, WriteWitness(&out, w))
		back, err := ReadWitness(&out, "again")
		require.NoError(t, err)
		require.Equal(t, len(w), len(back))
		CheckAll(cleanHistory(), Options{Witness: w, Timeout: 50 * time.Millisecond})
	})
}
