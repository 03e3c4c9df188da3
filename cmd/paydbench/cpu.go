package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: Linux exports
// them in USER_HZ, 100 on every architecture Go supports.
const userHZ = 100

// processCPU is a process's user plus system CPU time so far, read from
// /proc/<pid>/stat (10 ms resolution); false where there is no /proc.
func processCPU(pid int) (time.Duration, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields counted are those after its closing parenthesis.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / userHZ, true
}

// selfCPU is this process's user plus system CPU time so far (the load
// tool's own, not its children's: payd and the bare handler are apart).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuUse is the CPU that payd and the load tool spent on one measured run,
// and the requests the tool sent in it.
type cpuUse struct {
	payd, tool time.Duration
	paydKnown  bool
	requests   int64 // sent, plus webhook deliveries served
	// writes is the time payd's store write transactions held a
	// connection during the run (writesKnown: read from its metrics).
	writes      time.Duration
	writesKnown bool
}

// cpuMeter takes the readings around a run.
type cpuMeter struct {
	paydPID  int
	requests func() int64
	// writeBusy reads payd's write-transaction time so far (nil: none).
	writeBusy func() (time.Duration, bool)
	payd      time.Duration
	paydOK    bool
	tool      time.Duration
	sent      int64
	writes    time.Duration
	writesOK  bool
}

func (m *cpuMeter) start() {
	m.payd, m.paydOK = processCPU(m.paydPID)
	m.tool = selfCPU()
	m.sent = m.requests()
	if m.writeBusy != nil {
		m.writes, m.writesOK = m.writeBusy()
	}
}

func (m *cpuMeter) stop() cpuUse {
	u := cpuUse{tool: selfCPU() - m.tool, requests: m.requests() - m.sent}
	if p, ok := processCPU(m.paydPID); ok && m.paydOK {
		u.payd, u.paydKnown = p-m.payd, true
	}
	if m.writeBusy != nil && m.writesOK {
		if w, ok := m.writeBusy(); ok {
			u.writes, u.writesKnown = w-m.writes, true
		}
	}
	return u
}

// printCPU says what each measured scenario cost in CPU per operation, on
// both sides, and the load tool's CPU per request it sent.
func printCPU(out io.Writer, names []string, results map[string]*result) {
	header := false
	for _, name := range names {
		r, ok := results[name]
		if !ok || r.ops == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(out, "\nCPU per operation (process user+system time over the run / operations completed),")
			fmt.Fprintln(out, "and the time payd's write transactions held a database connection per operation (payd_db_write_busy_seconds_total):")
			header = true
		}
		n := time.Duration(r.ops)
		paydText := "payd ?"
		if r.cpu.paydKnown {
			paydText = "payd " + micros(r.cpu.payd/n)
		}
		perReq := "-"
		if r.cpu.requests > 0 {
			perReq = fmt.Sprintf("%.0f µs", float64(r.cpu.tool.Microseconds())/float64(r.cpu.requests))
		}
		if r.cpu.writesKnown {
			paydText += ", writes " + micros(r.cpu.writes/n)
		}
		fmt.Fprintf(out, "  %-28s %s, paydbench %s (%.1f requests sent or webhooks served each, %s per request)\n",
			name, paydText, micros(r.cpu.tool/n), float64(r.cpu.requests)/float64(r.ops), perReq)
	}
}
