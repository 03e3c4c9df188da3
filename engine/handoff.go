package engine

import (
	"errors"
	"sync"
	"time"
)

// handoff passes the attempts this engine's submissions queue straight to
// its own verification worker (runAttempts): a submission leases its
// attempt to this engine in its own transaction, and once that commits
// the worker checks it without claiming it. A claim is a write
// transaction (a commit, and on Postgres two round trips) and a wait for
// the worker to look for due work; a submission's attempt checked at once
// also ends its payer's polling sooner.
//
// It holds at most cap attempts, reserved before their transaction
// begins; a submission that finds it full, or no worker running, queues
// its attempt unleased, for any engine's claim. An attempt handed over
// and not checked when the worker stops is leased as a claimed one is:
// Run hands the lease back as it returns (ReleaseLeases), or it runs out.
type handoff struct {
	mu       sync.Mutex
	attempts chan *Attempt // nil while no worker runs
	reserved int           // submissions under way, plus attempts waiting in attempts
}

// open starts a worker's hand-off of up to n attempts at once.
func (h *handoff) open(n int) <-chan *Attempt {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.attempts, h.reserved = make(chan *Attempt, n), 0
	return h.attempts
}

// close ends it: submissions queue their attempts for claims again.
func (h *handoff) close() {
	h.mu.Lock()
	h.attempts = nil
	h.mu.Unlock()
}

// ticket is a place reserved for a submission's attempt.
type ticket struct {
	leasedUntil time.Time     // the lease to write on the attempt
	attempt     *Attempt      // the attempt the submission created, if it did
	attempts    chan *Attempt // the hand-off it was reserved in
	settled     bool
}

// reserve takes a place for a submission's attempt, or returns nil (no
// place, or no worker): the attempt is then queued unleased.
func (h *handoff) reserve(leasedUntil time.Time) *ticket {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.attempts == nil || h.reserved == cap(h.attempts) {
		return nil
	}
	h.reserved++
	return &ticket{leasedUntil: leasedUntil, attempts: h.attempts}
}

// settle ends a reservation once the submission's transaction is over
// (err its outcome): the attempt it created goes to the worker; otherwise
// (a refusal, a repeat of an ID, which returns the attempt it has) the
// place is freed. It reports whether it handed an attempt over.
func (h *handoff) settle(t *ticket, err error) bool {
	if t == nil || t.settled {
		return false
	}
	t.settled = true
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.attempts != t.attempts {
		return false // the worker stopped: the lease is handed back or runs out
	}
	if err != nil || t.attempt == nil {
		h.reserved--
		return false
	}
	h.attempts <- t.attempt // never blocks: its place was reserved
	return true
}

// abandon frees the place of a submission that never settled it (its
// transaction panicked).
func (h *handoff) abandon(t *ticket) {
	if t != nil && !t.settled {
		h.settle(t, errAbandoned)
	}
}

var errAbandoned = errors.New("submission abandoned")

// taken frees the place of an attempt the worker took.
func (h *handoff) taken() {
	h.mu.Lock()
	h.reserved--
	h.mu.Unlock()
}
