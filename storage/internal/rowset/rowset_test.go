package rowset

import (
	"errors"
	"testing"
	"time"
)

// fakeRows yields vals, then err.
type fakeRows struct {
	vals []int
	i    int
	err  error
}

func (r *fakeRows) Next() bool { r.i++; return r.i <= len(r.vals) }
func (r *fakeRows) Err() error { return r.err }
func (r *fakeRows) Scan(dest ...any) error {
	*dest[0].(*int) = r.vals[r.i-1]
	return nil
}

func scanInt(s Scanner) (*int, error) {
	var v int
	if err := s.Scan(&v); err != nil {
		return nil, err
	}
	if v < 0 {
		return nil, errors.New("negative")
	}
	return &v, nil
}

func TestCollect(t *testing.T) {
	got, err := Collect(&fakeRows{vals: []int{3, 1, 2}}, scanInt)
	if err != nil || len(got) != 3 || *got[0] != 3 || *got[2] != 2 {
		t.Errorf("Collect = %v, %v", got, err)
	}
	if _, err := Collect(&fakeRows{vals: []int{1, -1, 2}}, scanInt); err == nil || err.Error() != "negative" {
		t.Errorf("Collect with a bad row = %v, want scan's error", err)
	}
	broken := errors.New("connection lost")
	if _, err := Collect(&fakeRows{vals: []int{1}, err: broken}, scanInt); !errors.Is(err, broken) {
		t.Errorf("Collect of a broken result = %v, want %v", err, broken)
	}
}

func TestSortDue(t *testing.T) {
	type job struct {
		id  string
		due time.Time
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	jobs := []*job{{"c", t0.Add(time.Second)}, {"b", t0}, {"a", t0}}
	SortDue(jobs, func(j *job) (time.Time, string) { return j.due, j.id })
	if jobs[0].id != "a" || jobs[1].id != "b" || jobs[2].id != "c" {
		t.Errorf("SortDue: %s %s %s, want a b c", jobs[0].id, jobs[1].id, jobs[2].id)
	}
}
