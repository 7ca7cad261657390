package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zabd/zabd/zab/server/zkprocess"
)

// member is one server's row of `zabctl ensemble status`, from its srvr,
// mntr and conf four-letter words.
type member struct {
	Server      string `json:"server"`
	ID          string `json:"id"`
	Role        string `json:"role"`
	Epoch       int64  `json:"epoch"` // LastZxid's; srvr reports no established epoch
	LastZxid    int64  `json:"lastZxid"`
	Lag         string `json:"lag"`
	Connections int64  `json:"connections"`
	Outstanding int64  `json:"outstanding"`
	Err         string `json:"error,omitempty"`
}

// ensembleStatus is `zabctl ensemble status -server host:port[,...]`.
func ensembleStatus(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ensemble status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	servers := fs.String("server", "localhost:2181", "the members' client addresses, comma-separated")
	watch := fs.Duration("watch", 0, "refresh every DURATION (e.g. 2s) until interrupted")
	count := fs.Int("n", 0, "with -watch: stop after n tables (0: never)")
	format := fs.String("o", "text", "output: text or json")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for each member")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 || (*format != "text" && *format != "json") {
		fmt.Fprintln(stderr, "usage: zabctl ensemble status -server host:port[,...] [-watch 2s [-n N]] [-o json]")
		return 2
	}
	addrs := strings.Split(*servers, ",")
	for i := 0; ; i++ {
		members := probeAll(addrs, *timeout)
		if *format == "json" {
			json.NewEncoder(stdout).Encode(members)
		} else {
			if *watch > 0 {
				fmt.Fprintf(stdout, "%s\n", time.Now().Format(time.TimeOnly))
			}
			printMembers(stdout, members)
		}
		if *watch <= 0 || (*count > 0 && i+1 >= *count) {
			for _, m := range members {
				if m.Err != "" {
					return 1
				}
			}
			return 0
		}
		time.Sleep(*watch) // the refresh period the operator asked for
	}
}

// probeAll asks every member and computes each one's lag behind the
// newest zxid any member reported.
func probeAll(addrs []string, timeout time.Duration) []member {
	members := make([]member, len(addrs))
	newest := int64(-1)
	for i, addr := range addrs {
		members[i] = probe(strings.TrimSpace(addr), timeout)
		if members[i].Err == "" && members[i].LastZxid > newest {
			newest = members[i].LastZxid
		}
	}
	for i := range members {
		m := &members[i]
		switch {
		case m.Err != "":
			m.Lag = "-"
		case m.Epoch < newest>>32:
			m.Lag = fmt.Sprintf("epoch %d behind", newest>>32-m.Epoch)
		default:
			m.Lag = strconv.FormatInt(newest-m.LastZxid, 10)
		}
	}
	return members
}

func probe(addr string, timeout time.Duration) member {
	m := member{Server: addr, ID: "-"}
	word := func(w string) (map[string]string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		out, err := zkprocess.FourLetterWord(ctx, addr, w)
		if err != nil {
			return nil, err
		}
		if strings.Contains(out, "is not executed because it is not in the whitelist") {
			return nil, fmt.Errorf("%s is not in 4lw.commands.whitelist", w)
		}
		return keyValues(out), nil
	}
	srvr, err := word("srvr")
	if err != nil {
		m.Role, m.Err = "unreachable", err.Error()
		return m
	}
	m.Role = srvr["Mode"]
	if z, err := strconv.ParseUint(strings.TrimPrefix(srvr["Zxid"], "0x"), 16, 64); err == nil {
		m.LastZxid, m.Epoch = int64(z), int64(z>>32)
	}
	m.Connections, _ = strconv.ParseInt(srvr["Connections"], 10, 64)
	m.Outstanding, _ = strconv.ParseInt(srvr["Outstanding"], 10, 64)
	// mntr and conf add what srvr lacks; a server that refuses them still
	// gets its row.
	if mntr, err := word("mntr"); err == nil {
		if v, ok := mntr["zk_server_state"]; ok {
			m.Role = v
		}
		if v, ok := mntr["zk_num_alive_connections"]; ok {
			m.Connections, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := mntr["zk_outstanding_requests"]; ok {
			m.Outstanding, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if conf, err := word("conf"); err == nil {
		if v, ok := conf["serverId"]; ok {
			m.ID = v
		}
	}
	return m
}

// keyValues reads "key: value", "key=value" and "key\tvalue" lines.
func keyValues(out string) map[string]string {
	kv := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		for _, sep := range []string{": ", "\t", "="} {
			if k, v, ok := strings.Cut(line, sep); ok {
				kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
				break
			}
		}
	}
	return kv
}

func printMembers(w io.Writer, members []member) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tID\tROLE\tEPOCH\tLAST ZXID\tLAG\tCONNECTIONS\tOUTSTANDING")
	for _, m := range members {
		if m.Err != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t-\t(%s)\n", m.Server, m.ID, m.Role, m.Err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t0x%x\t%s\t%d\t%d\n", m.Server, m.ID, m.Role, m.Epoch, m.LastZxid, m.Lag, m.Connections, m.Outstanding)
	}
	tw.Flush()
}
