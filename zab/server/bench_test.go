package server

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zabd/zabd/wire"
	"github.com/zabd/zabd/wire/client"
)

// benchPipelined runs b.N requests of op over conns connections with
// inflight requests in flight each, against an in-process server with fsync
// on (the go test -bench counterpart of cmd/zabbench).
func benchPipelined(b *testing.B, op wire.OpCode, conns, inflight int) {
	cfg := testConfig(b.TempDir())
	cfg.TickTime = 2 * time.Second
	cfg.MaxSessionTimeout = 40 * time.Second
	ts := startServerTB(b, cfg)
	ctx := context.Background()
	clients := make([]*client.Conn, conns)
	payload := make([]byte, 100)
	for i := range clients {
		c, err := client.Dial(ctx, ts.addr, client.Session{Timeout: 30 * time.Second})
		require.NoError(b, err)
		defer c.Close()
		_, err = c.Create(ctx, fmt.Sprintf("/b%d", i), payload, client.OpenACL, wire.ModePersistent)
		require.NoError(b, err)
		clients[i] = c
	}
	b.ResetTimer()
	var wg sync.WaitGroup
	for i, c := range clients {
		n := b.N / conns
		if i < b.N%conns {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var req wire.Record = &wire.PathWatchRequest{Path: fmt.Sprintf("/b%d", i)}
			if op == wire.OpSetData {
				req = &wire.SetDataRequest{Path: fmt.Sprintf("/b%d", i), Data: payload, Version: -1}
			}
			var window []*client.Call
			for sent := 0; sent < n || len(window) > 0; {
				if sent < n && len(window) < inflight {
					call, err := c.Send(op, req)
					if err != nil {
						b.Error(err)
						return
					}
					window = append(window, call)
					sent++
					continue
				}
				if _, err := window[0].Wait(ctx); err != nil {
					b.Error(err)
					return
				}
				window = window[1:]
			}
		}()
	}
	wg.Wait()
}

func BenchmarkSetDataPipelined(b *testing.B)   { benchPipelined(b, wire.OpSetData, 8, 16) }
func BenchmarkGetDataPipelined(b *testing.B)   { benchPipelined(b, wire.OpGetData, 8, 16) }
func BenchmarkSetDataOneInFlight(b *testing.B) { benchPipelined(b, wire.OpSetData, 1, 1) }
