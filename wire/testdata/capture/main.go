// Command capture records ZooKeeper client traffic for wire's golden tests.
//
//	capture proxy -listen 127.0.0.1:P -target 127.0.0.1:Z -out DIR -session NAME
//	capture extract -in DIR -out GOLDEN_DIR -commands COMMANDS_FILE
//
// proxy relays connections between clients and a ZooKeeper server, writing
// every frame of connection N to DIR/NAME-N.frames, one line per frame: ">"
// (client to server) or "<" (server to client), then the frame's record
// bytes in hex, without the length prefix. A connection that opens with a
// four-letter word is logged as "> 4lw WORD" and its raw reply as "< raw HEX".
// With -raw (for peer connections, whose quorum stream has no length
// prefixes) every chunk read is logged as "> raw HEX" / "< raw HEX" instead.
// SIGUSR1 cuts every open connection, which makes clients reconnect (and
// re-send their watches). The proxy logs only; it never alters a byte.
//
// extract reads those logs, names each frame by the record it holds (the
// requests' opcodes tell which response each reply carries) and writes
// GOLDEN_DIR/manifest.json and copies the logs to GOLDEN_DIR.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: capture proxy|extract [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "proxy":
		err = runProxy(os.Args[2:])
	case "extract":
		err = runExtract(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "capture:", err)
		os.Exit(1)
	}
}
