// Command payd is the reference server and admin CLI of the payd engine.
//
//	payd serve [flags]            run the HTTP server (SQLite file by default)
//	payd admin <noun> <verb> ...  manage organizations, keys and wallets
//
// Every flag can also be set with a PAYD_* environment variable; run a
// command with -h to see its flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "payd:", err)
		os.Exit(1)
	}
}

const usage = `usage: payd <command> [flags]

commands:
  serve        run the HTTP server
  admin        manage organizations, API keys, signing secrets and wallets
  conformance  check a running deployment against the interface and contract

run "payd <command> -h" for the flags of a command.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "admin":
		return admin(ctx, args[1:], stdout, stderr)
	case "conformance":
		return conformance(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
