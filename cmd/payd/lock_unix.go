//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDatabase takes an exclusive lock on path + ".lock", so that a second
// payd serve on the same SQLite file refuses to start. It is an flock: the
// kernel releases it when the process exits, however it exits, so a crashed
// server never blocks the next one. Admin commands take no lock: their
// short transactions share the file with the server.
func lockDatabase(path string) (unlock func(), err error) {
	name := path + ".lock"
	file, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file %s: %w", name, err)
	}
	if err := syscall.Flock(int(file.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		file.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another payd serve is running on database %s (it holds %s): "+
				"a SQLite database belongs to one payd process; stop the other one, "+
				"or run several instances on one Postgres database (--db postgres://...)", path, name)
		}
		return nil, fmt.Errorf("lock file %s: %w", name, err)
	}
	return func() { file.Close() }, nil // closing the file releases the lock
}
