package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/zabd/zabd/zab/server/localens"
)

// runEnsemble is `zabd ensemble`: it runs an ensemble of zabd processes on
// loopback (this executable, once per member), prints the client connect
// string and each member's role, then every change of role until SIGINT
// or SIGTERM, which stops them all.
func runEnsemble(args []string) error {
	fs := flag.NewFlagSet("zabd ensemble", flag.ContinueOnError)
	voters := fs.Int("n", 3, "voting members")
	observers := fs.Int("observers", 0, "observers")
	dir := fs.String("dir", "zabd-ensemble", "directory for the members' data, configs and logs (kept between runs)")
	fresh := fs.Bool("fresh", false, "remove the members' data first")
	tick := fs.Duration("tick", 500*time.Millisecond, "tickTime")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("ensemble: unexpected arguments %q", fs.Args())
	}
	if *fresh {
		if err := os.RemoveAll(*dir); err != nil {
			return err
		}
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("ensemble: cannot find this executable to run the members: %w", err)
	}
	ens, err := localens.Start(localens.Options{Binary: bin, Voters: *voters, Observers: *observers, Dir: *dir, TickTime: *tick})
	if err != nil {
		return err
	}
	defer ens.Close()
	abs, _ := filepath.Abs(*dir)
	fmt.Printf("zabd ensemble: %d voters, %d observers, data and logs under %s\n", *voters, *observers, abs)
	fmt.Printf("client connect string: %s\n", ens.ConnectString())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = ens.WaitServing(waitCtx)
	cancel()
	if err != nil && ctx.Err() == nil {
		return err
	}
	roles := roleNames(ctx, ens)
	for i, m := range ens.Members {
		fmt.Printf("  server %d: %-8s pid %-7d client %s  log %s\n", m.ID, roles[i], m.Pid(), m.ClientAddr, m.LogPath())
	}
	fmt.Println("watching roles; kill a member (kill -9 PID) to see the ensemble take over; Ctrl-C stops them all")
	for {
		select {
		case <-ctx.Done():
			fmt.Println("stopping the ensemble")
			return nil
		case <-time.After(200 * time.Millisecond):
		}
		now := roleNames(ctx, ens)
		for i, m := range ens.Members {
			if now[i] != roles[i] && ctx.Err() == nil {
				fmt.Printf("%s server %d: %s (was %s)\n", time.Now().Format("15:04:05.000"), m.ID, now[i], roles[i])
			}
		}
		roles = now
	}
}

// roleNames are the members' srvr modes, or what it means when one has
// none: its process exited, or it is electing or synchronizing.
func roleNames(ctx context.Context, ens *localens.Ensemble) []string {
	names := ens.Modes(ctx)
	for i, m := range ens.Members {
		switch {
		case !m.Running():
			names[i] = "exited"
		case names[i] == "":
			names[i] = "electing"
		}
	}
	return names
}
