// Command payd is the reference server and admin CLI of the payd engine.
//
//	payd serve [flags]            run the HTTP server (SQLite file by default)
//	payd admin <noun> <verb> ...  manage organizations, keys and wallets
//
// Every flag can also be set with a PAYD_* environment variable; run a
// command with --help to see its flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp): // the usage asked for is printed
		os.Exit(0)
	case errors.Is(err, errUsage): // the usage is printed on stderr
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "payd:", err)
		os.Exit(1)
	}
}
