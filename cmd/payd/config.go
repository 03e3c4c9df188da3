package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	payd "github.com/payd-engine/payd"
	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/bkash"
	"github.com/payd-engine/payd/provider/sandbox"
	"github.com/payd-engine/payd/provider/smsinbox"
	"github.com/payd-engine/payd/storage/postgres"
	"github.com/payd-engine/payd/storage/sqlite"
)

// storeFlags are the flags every command that opens the database shares.
type storeFlags struct {
	db            string
	masterKeyFile string
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.db, "db", env("PAYD_DB", "payd.db"), "database: a SQLite file path (the default) or a postgres:// URL (env PAYD_DB)")
	fs.StringVar(&f.masterKeyFile, "master-key-file", env("PAYD_MASTER_KEY_FILE", ""),
		"file holding the master key that seals secrets at rest; created with mode 0600 by the first\n"+
			"payd serve or payd admin init; another command never creates it "+
			"(default: the SQLite path + \".key\"; PAYD_MASTER_KEY, base64 or hex of 32 bytes, takes precedence) (env PAYD_MASTER_KEY_FILE)")
}

// env returns the value of an environment variable, or def if unset.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envLookup is a variable's value; an empty one counts as unset.
func envLookup(name string) (string, bool) {
	v := os.Getenv(name)
	return v, v != ""
}

// envError is a variable's value that payd cannot use, with what is wrong.
func envError(name, value, problem string) error {
	return fmt.Errorf("%s=%q: %s", name, value, problem)
}

// envBool reads a boolean variable; unset is false.
func envBool(name string) (bool, error) {
	v, ok := envLookup(name)
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, envError(name, v, "not true or false")
	}
	return b, nil
}

func envInt(name string, def int) (int, error) {
	v, ok := envLookup(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return def, envError(name, v, "not a whole number")
	}
	return n, nil
}

func envFloat(name string, def float64) (float64, error) {
	v, ok := envLookup(name)
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return def, envError(name, v, "not a number")
	}
	return f, nil
}

func envDuration(name string, def time.Duration) (time.Duration, error) {
	v, ok := envLookup(name)
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return def, envError(name, v, "not a duration such as 90s or 5m")
	}
	return d, nil
}

// envDefaults reads the flag defaults of a command from PAYD_* variables,
// keeping the errors of the values it cannot parse for err: a bad value
// stops the command instead of falling back on the default in silence.
type envDefaults struct{ errs []error }

func (e *envDefaults) keep(err error) {
	if err != nil {
		e.errs = append(e.errs, err)
	}
}

func (e *envDefaults) bool(name string) bool {
	b, err := envBool(name)
	e.keep(err)
	return b
}

func (e *envDefaults) int(name string, def int) int {
	n, err := envInt(name, def)
	e.keep(err)
	return n
}

func (e *envDefaults) float(name string, def float64) float64 {
	f, err := envFloat(name, def)
	e.keep(err)
	return f
}

func (e *envDefaults) duration(name string, def time.Duration) time.Duration {
	d, err := envDuration(name, def)
	e.keep(err)
	return d
}

// proxies sets p from a variable, if set.
func (e *envDefaults) proxies(p *proxiesFlag, name string) {
	if v, ok := envLookup(name); ok {
		if err := p.Set(v); err != nil {
			e.keep(envError(name, v, err.Error()))
		}
	}
}

// err is every bad value read, or nil.
func (e *envDefaults) err() error { return errors.Join(e.errs...) }

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openStore opens the database a DSN names and applies its migrations,
// the store's own and every provider's lines (serve runs any provider,
// and the admin commands reach their tables): a postgres:// URL selects
// Postgres, anything else is a SQLite file path.
// Its error holds none of the DSN's passwords.
func openStore(ctx context.Context, dsn string) (payd.Store, error) {
	var store payd.Store
	var err error
	if isPostgres(dsn) {
		store, err = postgres.Open(ctx, dsn, sandbox.Migrations(), smsinbox.Migrations(), bkash.Migrations())
	} else {
		store, err = sqlite.Open(ctx, dsn, sandbox.Migrations(), smsinbox.Migrations(), bkash.Migrations())
	}
	if err != nil {
		return nil, redactedError{text: redactPasswords(err.Error(), dsn), err: err}
	}
	return store, nil
}

// redacted replaces a password wherever payd prints a DSN.
const redacted = "***"

// dsnPasswordParam is a password or sslpassword parameter of a key=value
// DSN, its value bare or single-quoted (with backslash escapes).
var dsnPasswordParam = regexp.MustCompile(`(?i)\b(password|sslpassword)(\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)

// redactDSN is a database DSN as payd prints it, in errors and logs: a
// postgres URL's user password and its password and sslpassword query
// parameters, or those parameters of a key=value DSN, become "***". Every
// place that prints a DSN uses it.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return dsnPasswordParam.ReplaceAllString(dsn, "${1}${2}"+redacted)
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), redacted)
	}
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		for i, p := range params {
			k, _, _ := strings.Cut(p, "=")
			if name, err := url.QueryUnescape(k); err != nil || isPasswordParam(name) {
				params[i] = k + "=" + redacted
			}
		}
		u.RawQuery = strings.Join(params, "&")
	}
	return u.String()
}

func isPasswordParam(name string) bool {
	return strings.EqualFold(name, "password") || strings.EqualFold(name, "sslpassword")
}

// dsnPasswords are the passwords a DSN holds, as written and decoded.
func dsnPasswords(dsn string) []string {
	var out []string
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.Opaque == "" {
		if pw, has := u.User.Password(); has {
			out = append(out, pw, url.PathEscape(pw), url.QueryEscape(pw))
		}
		for k, vs := range u.Query() {
			if isPasswordParam(k) {
				for _, v := range vs {
					out = append(out, v, url.QueryEscape(v))
				}
			}
		}
	}
	for _, m := range dsnPasswordParam.FindAllStringSubmatch(dsn, -1) {
		out = append(out, strings.Trim(m[3], "'"), m[3])
	}
	return out
}

// redactPasswords removes from text (an error of a database driver) the
// DSN itself and every password it holds, in whatever form the driver
// printed them.
func redactPasswords(text, dsn string) string {
	text = strings.ReplaceAll(text, dsn, redactDSN(dsn))
	for _, pw := range dsnPasswords(dsn) {
		if pw != "" && pw != redacted {
			text = strings.ReplaceAll(text, pw, redacted)
		}
	}
	return text
}

// redactedError is an error whose text was cleaned of secrets; errors.Is
// and As still see the original.
type redactedError struct {
	text string
	err  error
}

func (e redactedError) Error() string { return e.text }
func (e redactedError) Unwrap() error { return e.err }

// loadKeyring returns the keyring for the master key: PAYD_MASTER_KEY if set,
// else the key file, which is generated on first use.
func (f *storeFlags) loadKeyring() (*engine.Keyring, error) {
	if v := os.Getenv("PAYD_MASTER_KEY"); v != "" {
		key, err := decodeMasterKey(v)
		if err != nil {
			return nil, fmt.Errorf("PAYD_MASTER_KEY: %w", err)
		}
		return engine.NewKeyring(key)
	}
	path := f.masterKeyFile
	if path == "" {
		if isPostgres(f.db) {
			return nil, errors.New("set PAYD_MASTER_KEY or --master-key-file for a postgres database")
		}
		path = f.db + ".key"
	}
	key, err := readOrCreateKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("master key file %s: %w", path, err)
	}
	return engine.NewKeyring(key)
}

// checkKeyFileMode refuses a key file that group or others may read or
// write: whoever can read it can open every secret sealed in the database.
func checkKeyFileMode(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("mode %04o lets group or others use the key; make it owner-only: chmod 600 %s", perm, path)
	}
	return nil
}

func decodeMasterKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, dec := range []func(string) ([]byte, error){
		hex.DecodeString, base64.StdEncoding.DecodeString, base64.RawStdEncoding.DecodeString,
		base64.URLEncoding.DecodeString, base64.RawURLEncoding.DecodeString,
	} {
		if b, err := dec(s); err == nil && len(b) == engine.MasterKeySize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("must be %d bytes in hex or base64", engine.MasterKeySize)
}

// readOrCreateKeyFile reads a master key file, creating it with a new
// random key and mode 0600 if it does not exist. O_EXCL makes a server and
// an admin command started together agree on one key.
func readOrCreateKeyFile(path string) ([]byte, error) {
	key := make([]byte, engine.MasterKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, werr := file.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
		if cerr := file.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			return key, nil
		}
		os.Remove(path)
		return nil, werr
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	if err := checkKeyFileMode(path); err != nil {
		return nil, err
	}
	for range 50 { // a concurrent creator may not have written it yet
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if len(strings.TrimSpace(string(data))) > 0 {
			return decodeMasterKey(string(data))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil, errors.New("file is empty")
}
