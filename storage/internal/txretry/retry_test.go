package txretry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

var errBusy = errors.New("busy")

func policy() Policy {
	return Policy{
		MaxAttempts: 3, FirstBackoff: time.Microsecond, MaxBackoff: time.Microsecond,
		Retryable: func(err error) bool { return errors.Is(err, errBusy) },
		GiveUp:    func(n int, err error) error { return fmt.Errorf("gave up after %d: %w", n, err) },
	}
}

func TestDo(t *testing.T) {
	ctx := context.Background()
	other := errors.New("other")
	for _, c := range []struct {
		name  string
		errs  []error // what each attempt returns
		want  error
		calls int
	}{
		{"success", []error{nil}, nil, 1},
		{"busy then success", []error{errBusy, nil}, nil, 2},
		{"not retryable", []error{other}, other, 1},
		{"busy until the bound", []error{errBusy, errBusy, errBusy, nil}, errBusy, 3},
	} {
		calls := 0
		err := policy().Do(ctx, func() error { calls++; return c.errs[calls-1] })
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) || calls != c.calls {
			t.Errorf("%s: Do = %v after %d calls, want %v after %d", c.name, err, calls, c.want, c.calls)
		}
	}
}

func TestDoStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := policy()
	p.FirstBackoff, p.MaxBackoff = time.Hour, time.Hour
	if err := p.Do(ctx, func() error { return errBusy }); !errors.Is(err, context.Canceled) {
		t.Errorf("Do = %v, want context.Canceled", err)
	}
}
