// Command zabd runs a zabd server.
//
// With no arguments it serves standalone on 127.0.0.1:2181 with its data
// under ./zabd-data; with -config it reads a ZooKeeper zoo.cfg (several
// server.N lines and a myid file make it an ensemble member). It stops
// gracefully on SIGINT or SIGTERM. `zabd ensemble -n 3` runs a local
// ensemble of zabd processes. See docs/zabd.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"

	"github.com/zabd/zabd/zab/server"
	"github.com/zabd/zabd/zab/server/config"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "zabd:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) > 0 && args[0] == "ensemble" {
		return runEnsemble(args[1:])
	}
	fs := flag.NewFlagSet("zabd", flag.ContinueOnError)
	configFile := fs.String("config", "", "read this ZooKeeper zoo.cfg (default: standalone on 127.0.0.1:2181, data in ./zabd-data)")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	allowDataLoss := fs.Bool("allow-data-loss", false, "start even if recovery finds damage that loses durable txns")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (use -config FILE)", fs.Args())
	}
	log, err := newLogger(*logFormat, *logLevel)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(*configFile)
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings {
		log.Warn("config: "+w.Message, "file", cfg.File, "line", w.Line, "key", w.Key)
	}
	limit, gogc := memorySettings()
	log.Info("memory: Go runtime settings (see docs/zabd.md, Memory)", "GOMEMLIMIT", limit, "GOGC", gogc)
	srv, err := server.New(server.Options{Config: cfg, Log: log, AllowDataLoss: *allowDataLoss})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = srv.Serve(ctx)
	log.Info("stopped")
	return err
}

// loadConfig reads the zoo.cfg, or builds the no-argument configuration:
// ZooKeeper's defaults, standalone on 127.0.0.1:2181, data in ./zabd-data,
// admin server off.
func loadConfig(file string) (*config.Config, error) {
	if file != "" {
		return config.Load(file)
	}
	cfg := config.Default()
	cfg.File = "(defaults)"
	cfg.DataDir, cfg.DataLogDir = "zabd-data", "zabd-data"
	cfg.ClientPort, cfg.ClientPortAddress = 2181, "127.0.0.1"
	cfg.TickTime = 2 * config.DefaultTickTime / 3 // 2000 ms, as ZooKeeper's sample zoo.cfg
	cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 2*cfg.TickTime, 20*cfg.TickTime
	cfg.AdminEnabled = false
	return cfg, nil
}

// memorySettings describes the garbage collector's settings, which zabd
// leaves as the environment's GOMEMLIMIT and GOGC make them: the soft
// memory limit ("none" or bytes) and the heap growth percentage.
func memorySettings() (limit, gogc string) {
	limit = "none"
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		limit = strconv.FormatInt(l, 10)
	}
	gogc = os.Getenv("GOGC")
	if gogc == "" {
		gogc = "100"
	}
	return limit, gogc
}

func newLogger(format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("-log-format %q: want text or json", format)
}
