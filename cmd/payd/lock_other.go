//go:build !unix

package main

// lockDatabase does nothing where there is no flock: two payd serve on one
// SQLite file are not detected there.
func lockDatabase(string) (unlock func(), err error) { return func() {}, nil }
