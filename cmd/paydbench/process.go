package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// paydProcess is the payd serve being measured.
type paydProcess struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:port/api
	metrics string // http://127.0.0.1:port/metrics
	pid     int
	rss     int64 // peak RSS seen, bytes
}

func startPayd(ctx context.Context, bin, db string, env []string, dir, logLevel string, extra ...string) (*paydProcess, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	opsAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	// No rate limits (one API key carries all the load) and, by default,
	// warnings only (-log-level info measures the access log too).
	args := append([]string{"serve", "--db", db, "--addr", addr, "--log-level", logLevel,
		"--rate-limit", "0", "--rate-limit-verify", "0", "--rate-limit-withdraw", "0",
		"--sandbox-payout-delay", "100ms", "--master-key-file", filepath.Join(dir, "unused.key"),
		"--metrics-addr", opsAddr}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	logFile, err := os.Create(filepath.Join(dir, "payd.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &paydProcess{cmd: cmd, base: "http://" + addr + "/api", metrics: "http://" + opsAddr + "/metrics", pid: cmd.Process.Pid}
	if err := waitHTTP("http://"+addr+"/api/v1/balance", 30*time.Second); err != nil {
		p.stop()
		log, _ := os.ReadFile(logFile.Name())
		return nil, fmt.Errorf("%v\n%s", err, log)
	}
	return p, nil
}

// metricsClient reads payd's metrics; a payd that does not answer costs
// the figure, not the run.
var metricsClient = &http.Client{Timeout: 10 * time.Second}

// writeBusy is the time payd's store write transactions have held a
// connection (payd_db_write_busy_seconds_total, summed over its pools),
// scraped from its metrics; false if they cannot be read.
func (p *paydProcess) writeBusy() (time.Duration, bool) {
	resp, err := metricsClient.Get(p.metrics)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, false
	}
	var total float64
	found := false
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "payd_db_write_busy_seconds_total{") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, false
		}
		total, found = total+v, true
	}
	return time.Duration(total * float64(time.Second)), found
}

// peakRSS reads the high-water mark of the process's resident set.
func (p *paydProcess) peakRSS() int64 {
	if p.cmd.ProcessState != nil {
		return p.rss
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return p.rss
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb*1024 > p.rss {
				p.rss = kb * 1024
			}
		}
	}
	return p.rss
}

func (p *paydProcess) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	p.peakRSS()
	p.cmd.Process.Signal(os.Interrupt)
	p.cmd.Wait()
}

// org is the organization the load runs as.
type org struct {
	id, apiKey, secret string
}

// bootstrap creates the organization through payd admin, as an operator
// would: H2H and withdrawals on, three receiving wallets, a large balance.
func bootstrap(bin, db string, env []string) (*org, error) {
	admin := func(args ...string) (map[string]any, error) { return runAdmin(bin, db, env, args...) }
	created, err := admin("org", "create", "--name", "paydbench", "--h2h", "--withdrawals")
	if err != nil {
		return nil, err
	}
	o := &org{id: created["organization_id"].(string), apiKey: created["api_key"].(string), secret: created["signing_secret"].(string)}
	for i := range 3 {
		if _, err := admin("wallet", "add", "--org", o.id, "--channel", "bkash", "--operation", "cash_out",
			"--phone", fmt.Sprintf("0181100000%d", i), "--name", "Bench agent"); err != nil {
			return nil, err
		}
	}
	if _, err := admin("balance", "adjust", "--org", o.id, "--amount", "999999999", "--reason", "paydbench float"); err != nil {
		return nil, err
	}
	return o, nil
}

// runAdmin runs one payd admin command on db and decodes its JSON answer.
func runAdmin(bin, db string, env []string, args ...string) (map[string]any, error) {
	cmd := exec.Command(bin, append(append([]string{"admin"}, args...), "--db", db, "--json")...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("payd admin %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	var v map[string]any
	return v, json.Unmarshal(out, &v)
}

func numCPU() int { return runtime.NumCPU() }
