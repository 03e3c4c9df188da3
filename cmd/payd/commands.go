package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
)

// Admin commands declared in files of their own join adminCommands here.
func init() {
	maps.Copy(adminCommands, smsReviewCommands)
}

// usage is what payd prints without a command, or with --help.
const usage = `usage: payd <command> [flags]

commands:
  serve        run the HTTP server
  admin        manage organizations, API keys, signing secrets and wallets
  conformance  check a running deployment against the interface and contract

run "payd <command> --help" for the flags of a command.
`

// errUsage is a command line without a command: the usage is printed on
// stderr and payd exits with status 2.
var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
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

// parseFlags parses args into fs. Asked for help (-h, --help), it prints
// the usage on stdout and returns flag.ErrHelp, which exits 0; a bad flag's
// message and the usage go to stderr.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var out bytes.Buffer
	fs.SetOutput(&out)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	if errors.Is(err, flag.ErrHelp) {
		stdout.Write(out.Bytes())
	} else {
		stderr.Write(out.Bytes())
	}
	return err
}
