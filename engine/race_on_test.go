//go:build race

package engine_test

// raceEnabled: the race detector slows the store some tenfold, so the
// simulation runs fewer seeds by default under it (CI runs go test -race;
// every run draws new seeds, so coverage accumulates across runs).
const raceEnabled = true
