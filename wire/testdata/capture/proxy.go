package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/zabd/zabd/wire"
)

// proxyMaxFrame is larger than any frame a test sends, so that the proxy
// relays oversized frames too and lets the server refuse them.
const proxyMaxFrame = 64 << 20

func runProxy(args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:21811", "address to accept clients on (127.0.0.1 only)")
	target := fs.String("target", "127.0.0.1:21810", "ZooKeeper server")
	out := fs.String("out", "frames", "directory for the frame logs")
	session := fs.String("session", "session", "file name prefix of this run's logs")
	raw := fs.Bool("raw", false, "log raw chunks instead of frames (peer connections, which are not all framed)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	log.Printf("proxy %s -> %s, logs %s/%s-N.frames", *listen, *target, *out, *session)

	var mu sync.Mutex
	open := map[int][]net.Conn{}
	cuts := make(chan os.Signal, 1)
	signal.Notify(cuts, syscall.SIGUSR1)
	go func() {
		for range cuts {
			mu.Lock()
			for id, cs := range open {
				log.Printf("cutting connection %d", id)
				for _, c := range cs {
					c.Close()
				}
			}
			mu.Unlock()
		}
	}()

	for n := 1; ; n++ {
		client, err := ln.Accept()
		if err != nil {
			return err
		}
		server, err := net.Dial("tcp", *target)
		if err != nil {
			client.Close()
			log.Printf("dial %s: %v", *target, err)
			continue
		}
		f, err := os.Create(filepath.Join(*out, fmt.Sprintf("%s-%d.frames", *session, n)))
		if err != nil {
			return err
		}
		mu.Lock()
		open[n] = []net.Conn{client, server}
		mu.Unlock()
		go func(id int) {
			relay(client, server, f, *raw)
			mu.Lock()
			delete(open, id)
			mu.Unlock()
		}(n)
	}
}

// frameLog serialises the two directions' lines into one file.
type frameLog struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *frameLog) line(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", args...)
	l.w.Flush()
}

func relay(client, server net.Conn, f *os.File, raw bool) {
	defer f.Close()
	fl := &frameLog{w: bufio.NewWriter(f)}
	var wg sync.WaitGroup
	wg.Add(2)
	if raw {
		go func() { defer wg.Done(); defer server.Close(); copyRaw(client, server, fl, ">") }()
		go func() { defer wg.Done(); defer client.Close(); copyRaw(server, client, fl, "<") }()
	} else {
		go func() { defer wg.Done(); pump(client, server, fl, ">", true) }()
		go func() { defer wg.Done(); pump(server, client, fl, "<", false) }()
	}
	wg.Wait()
}

// pump copies frames from src to dst and logs each one. On the client side
// the first four bytes may be a four-letter word instead of a length, as
// ZooKeeper checks; the rest of such a connection is relayed and logged raw.
func pump(src, dst net.Conn, fl *frameLog, dir string, fromClient bool) {
	defer dst.Close()
	defer src.Close()
	var hdr [4]byte
	for first := true; ; first = false {
		if _, err := io.ReadFull(src, hdr[:]); err != nil {
			return
		}
		n := int32(binary.BigEndian.Uint32(hdr[:]))
		if w, ok := wire.FourLetterWord(n); ok && first && fromClient {
			fl.line("%s 4lw %s", dir, w)
			dst.Write(hdr[:])
			copyRaw(src, dst, fl, dir)
			return
		}
		if first && !fromClient && n > proxyMaxFrame {
			// The reply to a four-letter word is plain text.
			fl.line("%s raw %s", dir, hex.EncodeToString(hdr[:]))
			dst.Write(hdr[:])
			copyRaw(src, dst, fl, dir)
			return
		}
		if n < 0 || n > proxyMaxFrame {
			fl.line("%s badlength %d", dir, n)
			dst.Write(hdr[:])
			copyRaw(src, dst, fl, dir)
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(src, body); err != nil {
			fl.line("%s truncated %s", dir, hex.EncodeToString(body))
			return
		}
		fl.line("%s %s", dir, hex.EncodeToString(body))
		if _, err := dst.Write(append(hdr[:], body...)); err != nil {
			return
		}
	}
}

func copyRaw(src, dst net.Conn, fl *frameLog, dir string) {
	buf := make([]byte, 4096)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			fl.line("%s raw %s", dir, hex.EncodeToString(buf[:n]))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				log.Printf("relay: %v", err)
			}
			return
		}
	}
}
