package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/payd-engine/payd/engine"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// ReadOne's one-row reads through getRow (a deposit by its ID, merchant_id
// or checkout token: a GET's, the hosted checkout's) run on connections of
// their own, opened and driven through SQLite's C API as modernc
// transpiles it, not through database/sql and the driver. For every query
// the driver copies each result column's name and declared type into Go
// strings (52 allocations for a deposit) and database/sql adds its
// connection bookkeeping. Without them (and encoding/json) a signed GET
// takes 35% fewer instructions (BENCHMARKS.md, "Signed GET: reads past the
// driver").
// What SQLite does is unchanged: the statement is prepared once per
// connection and run in its own implicit read transaction, so it reads one
// snapshot, and the file is read each time, so another process's commit is
// seen by the next read. The connections are the same library's, so
// SQLite's locks between them and the store's other connections are those
// between any two of its connections. As before, a read is not interrupted
// when its request ends: it is one row by key, and busy_timeout bounds the
// rare wait for a file another process holds exclusively.

// libReaders is a pool of read-only connections.
type libReaders struct {
	filename string // as sqlite3_open_v2 takes it: a file: URI
	idle     chan *libConn
	slots    chan struct{} // one per open or opening connection
	done     chan struct{} // closed by close
	mu       sync.Mutex
	all      []*libConn
	closed   bool
	waits    int64         // under mu: gets that found no connection free
	waited   time.Duration // under mu: the time they waited
}

func newLibReaders(filename string, n int) *libReaders {
	return &libReaders{filename: filename, idle: make(chan *libConn, n), slots: make(chan struct{}, n), done: make(chan struct{})}
}

var errReadersClosed = errors.New("sqlite: store closed")

// get returns an idle connection, opening one while fewer than the pool's
// size are open, or waits for one.
func (p *libReaders) get(ctx context.Context) (*libConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // the request has ended: no read for it
	}
	select {
	case <-p.done:
		return nil, errReadersClosed
	case c := <-p.idle:
		return c, nil
	default:
	}
	start := time.Now()
	select {
	case c := <-p.idle:
		p.countWait(start)
		return c, nil
	case p.slots <- struct{}{}:
		c, err := p.open()
		if err != nil {
			<-p.slots
			return nil, err
		}
		return c, nil
	case <-p.done:
		return nil, errReadersClosed
	case <-ctx.Done():
		p.countWait(start)
		return nil, ctx.Err()
	}
}

func (p *libReaders) countWait(start time.Time) {
	p.mu.Lock()
	p.waits++
	p.waited += time.Since(start)
	p.mu.Unlock()
}

func (p *libReaders) put(c *libConn) { p.idle <- c }

// stats are the pool's statistics, as database/sql's are for the others.
func (p *libReaders) stats(name string) engine.PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	idle := len(p.idle)
	return engine.PoolStats{Pool: name, MaxOpen: cap(p.slots), Open: len(p.all), InUse: max(0, len(p.all)-idle), Idle: idle,
		Waits: p.waits, WaitDuration: p.waited}
}

// libReadHook, when set (by a test, before the store opens), is called
// for every statement read past database/sql, which a counting driver
// connection does not see.
var libReadHook func()

// readRow runs query, which selects at most one row, on a connection of
// the pool and scans its row with scan. No row is sql.ErrNoRows, as from
// (*sql.Row).Scan, so interpretError turns it into engine.ErrNotFound.
func (p *libReaders) readRow(ctx context.Context, query string, args []any, scan func(*rowValues) error) error {
	if libReadHook != nil {
		libReadHook()
	}
	c, err := p.get(ctx)
	if err != nil {
		return err
	}
	dropped := false
	defer func() {
		if !dropped {
			p.put(c) // also after a panic in scan: the statement was reset
		}
	}()
	err = c.readRow(query, args, scan)
	// SQLite's errors come back from readRow as they are, unwrapped (and
	// errors.As would cost an allocation per read).
	if _, ok := err.(*libError); ok && !isBusy(err) {
		// An error of SQLite's own other than "busy" (I/O, corruption,
		// out of memory) may leave the connection unusable.
		dropped = true
		p.drop(c)
	}
	return err
}

// drop closes c, which failed in a way that may have left it unusable,
// and frees its slot.
func (p *libReaders) drop(c *libConn) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.idle <- c // close is waiting for it, and closes it
		return
	}
	for i, o := range p.all {
		if o == c {
			p.all = append(p.all[:i], p.all[i+1:]...)
			break
		}
	}
	p.mu.Unlock()
	c.close()
	<-p.slots
}

func (p *libReaders) open() (*libConn, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errReadersClosed
	}
	c, err := openLibConn(p.filename)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.close()
		return nil, errReadersClosed
	}
	p.all = append(p.all, c)
	return c, nil
}

// close closes every connection; reads still running finish first, since
// their connections are closed as they come back.
func (p *libReaders) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	all := p.all
	p.all = nil
	close(p.done)
	p.mu.Unlock()
	for range all {
		<-p.idle
	}
	for _, c := range all {
		c.close()
	}
}

// libConn is one connection with its prepared statements. It is used by
// one goroutine at a time, as a libc.TLS must be.
type libConn struct {
	tls   *libc.TLS
	db    uintptr
	stmts map[string]uintptr
	arg   uintptr // C memory for bound text, argN bytes
	argN  int
	row   rowValues
}

func openLibConn(filename string) (_ *libConn, err error) {
	c := &libConn{tls: libc.NewTLS(), stmts: map[string]uintptr{}}
	name, err := libc.CString(filename)
	if err != nil {
		c.tls.Close()
		return nil, err
	}
	defer libc.Xfree(c.tls, name)
	pdb := c.tls.Alloc(int(unsafe.Sizeof(uintptr(0))))
	defer c.tls.Free(int(unsafe.Sizeof(uintptr(0))))
	rc := sqlite3.Xsqlite3_open_v2(c.tls, name, pdb,
		sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_URI|sqlite3.SQLITE_OPEN_NOMUTEX, 0)
	c.db = *(*uintptr)(cmem(pdb))
	if rc != sqlite3.SQLITE_OK {
		err = c.err(rc)
		c.close()
		return nil, err
	}
	defer func() {
		if err != nil {
			c.close()
		}
	}()
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	if rc := sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, busyTimeoutMS); rc != sqlite3.SQLITE_OK {
		return nil, c.err(rc)
	}
	// As the reader pool's: a write through these connections is an error.
	for _, pragma := range []string{"PRAGMA query_only = 1", "PRAGMA foreign_keys = 1"} {
		if err := c.exec(pragma); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *libConn) exec(query string) error {
	q, err := libc.CString(query)
	if err != nil {
		return err
	}
	defer libc.Xfree(c.tls, q)
	if rc := sqlite3.Xsqlite3_exec(c.tls, c.db, q, 0, 0, 0); rc != sqlite3.SQLITE_OK {
		return c.err(rc)
	}
	return nil
}

func (c *libConn) close() {
	for _, s := range c.stmts {
		sqlite3.Xsqlite3_finalize(c.tls, s)
	}
	c.stmts = nil
	if c.arg != 0 {
		libc.Xfree(c.tls, c.arg)
		c.arg = 0
	}
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
	}
	c.tls.Close()
}

// libError is an error SQLite returned, with its extended result code.
type libError struct {
	code int
	msg  string
}

func (e *libError) Error() string { return fmt.Sprintf("%s (%d)", e.msg, e.code) }

// Code is the extended result code, as (*sqlite.Error).Code.
func (e *libError) Code() int { return e.code }

func (c *libConn) err(rc int32) error {
	msg := ""
	if c.db != 0 {
		msg = libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))
	} else {
		msg = libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
	}
	return &libError{code: int(rc), msg: msg}
}

// stmt returns query's statement, preparing it the first time.
func (c *libConn) stmt(query string) (uintptr, error) {
	if s, ok := c.stmts[query]; ok {
		return s, nil
	}
	q, err := libc.CString(query)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, q)
	ps := c.tls.Alloc(int(unsafe.Sizeof(uintptr(0))))
	defer c.tls.Free(int(unsafe.Sizeof(uintptr(0))))
	rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, q, -1, sqlite3.SQLITE_PREPARE_PERSISTENT, ps, 0)
	if rc != sqlite3.SQLITE_OK {
		return 0, c.err(rc)
	}
	s := *(*uintptr)(cmem(ps))
	if s == 0 {
		return 0, fmt.Errorf("sqlite: no statement in %q", query)
	}
	if len(c.stmts) < stmtCacheSize {
		c.stmts[query] = s
	}
	return s, nil
}

// bindArgs binds args; text is copied into the connection's argument
// memory, where SQLite reads it until the statement is reset.
func (c *libConn) bindArgs(s uintptr, args []any) error {
	n := 0
	for _, a := range args {
		if t, ok := a.(string); ok {
			n += len(t) + 1
		}
	}
	if n > c.argN {
		if c.arg != 0 {
			libc.Xfree(c.tls, c.arg)
		}
		c.arg = libc.Xmalloc(c.tls, uint64(max(n, 256)))
		if c.arg == 0 {
			c.argN = 0
			return fmt.Errorf("sqlite: cannot allocate %d bytes", n)
		}
		c.argN = max(n, 256)
	}
	mem := unsafe.Slice((*byte)(cmem(c.arg)), c.argN)
	off := 0
	for i, a := range args {
		var rc int32
		switch a := a.(type) {
		case string:
			copy(mem[off:], a)
			mem[off+len(a)] = 0
			rc = sqlite3.Xsqlite3_bind_text(c.tls, s, int32(i+1), c.arg+uintptr(off), int32(len(a)), 0)
			off += len(a) + 1
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, s, int32(i+1), a)
		case int:
			rc = sqlite3.Xsqlite3_bind_int64(c.tls, s, int32(i+1), int64(a))
		case nil:
			rc = sqlite3.Xsqlite3_bind_null(c.tls, s, int32(i+1))
		default:
			return fmt.Errorf("sqlite: argument %d: %T is not a one-row read's argument type", i+1, a)
		}
		if rc != sqlite3.SQLITE_OK {
			return c.err(rc)
		}
	}
	return nil
}

// readRow runs query with args and, if it returns a row, passes its first
// row to scan; no row is sql.ErrNoRows.
func (c *libConn) readRow(query string, args []any, scan func(*rowValues) error) error {
	s, err := c.stmt(query)
	if err != nil {
		return err
	}
	if _, cached := c.stmts[query]; !cached {
		defer sqlite3.Xsqlite3_finalize(c.tls, s)
	}
	// Reset ends the statement's read transaction; bindings are cleared so
	// that none points at argument memory the next read rewrites.
	defer func() {
		sqlite3.Xsqlite3_reset(c.tls, s)
		sqlite3.Xsqlite3_clear_bindings(c.tls, s)
	}()
	if err := c.bindArgs(s, args); err != nil {
		return err
	}
	switch rc := sqlite3.Xsqlite3_step(c.tls, s); rc {
	case sqlite3.SQLITE_ROW:
	case sqlite3.SQLITE_DONE:
		return sql.ErrNoRows
	default:
		return c.err(rc)
	}
	row := &c.row
	row.lib, row.stmt = c, s
	defer func() { row.lib, row.stmt = nil, 0 }()
	return scan(row)
}

// scan assigns the current row of s to dest as rowValues.Scan would from
// the row's driver values, reading the common cases (text into a string,
// an integer into an int or a time) straight from SQLite: boxing each
// value in an interface first cost an allocation per column. Any other
// case goes through column and assign, so the two agree
// (TestLibScanAgreesWithAssign).
func (c *libConn) scan(s uintptr, dest []any) error {
	if n := int(sqlite3.Xsqlite3_column_count(c.tls, s)); len(dest) != n {
		return fmt.Errorf("sqlite: %d columns scanned into %d destinations", n, len(dest))
	}
	for i, d := range dest {
		if err := c.scanColumn(s, int32(i), d); err != nil {
			return fmt.Errorf("sqlite: scan column %d: %w", i, err)
		}
	}
	return nil
}

func (c *libConn) scanColumn(s uintptr, i int32, dest any) error {
	t := sqlite3.Xsqlite3_column_type(c.tls, s, i)
	switch d := dest.(type) {
	case *string:
		if t == sqlite3.SQLITE_TEXT {
			*d = c.text(s, i)
			return nil
		}
	case stringCol:
		switch t {
		case sqlite3.SQLITE_TEXT:
			*d.s = c.text(s, i)
			return nil
		case sqlite3.SQLITE_NULL:
			*d.s = ""
			return nil
		}
	case *int64:
		if t == sqlite3.SQLITE_INTEGER {
			*d = int64(sqlite3.Xsqlite3_column_int64(c.tls, s, i))
			return nil
		}
	case *int:
		if t == sqlite3.SQLITE_INTEGER {
			if n := int64(sqlite3.Xsqlite3_column_int64(c.tls, s, i)); int64(int(n)) == n {
				*d = int(n)
				return nil
			}
		}
	case timeCol:
		switch t {
		case sqlite3.SQLITE_INTEGER:
			*d.t = time.UnixMicro(int64(sqlite3.Xsqlite3_column_int64(c.tls, s, i))).UTC()
			return nil
		case sqlite3.SQLITE_NULL:
			*d.t = time.Time{}
			return nil
		}
	case bytesCol:
		switch t {
		case sqlite3.SQLITE_TEXT, sqlite3.SQLITE_BLOB, sqlite3.SQLITE_NULL:
			*d.b = c.bytes(s, i, t)
			return nil
		}
	case decimalCol:
		if t == sqlite3.SQLITE_TEXT {
			return d.set(c.text(s, i))
		}
	}
	return assign(dest, c.column(s, i))
}

// text is column i, of type TEXT, as a string.
func (c *libConn) text(s uintptr, i int32) string {
	p := sqlite3.Xsqlite3_column_text(c.tls, s, i)
	n := int(sqlite3.Xsqlite3_column_bytes(c.tls, s, i))
	if p == 0 || n == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(cmem(p)), n))
}

// bytes is column i, of type t (TEXT, BLOB or NULL), as bytesCol keeps
// it: a fresh slice, nil when NULL or empty.
func (c *libConn) bytes(s uintptr, i int32, t int32) []byte {
	var p uintptr
	if t == sqlite3.SQLITE_BLOB {
		p = sqlite3.Xsqlite3_column_blob(c.tls, s, i)
	} else if t == sqlite3.SQLITE_TEXT {
		p = sqlite3.Xsqlite3_column_text(c.tls, s, i)
	}
	n := int(sqlite3.Xsqlite3_column_bytes(c.tls, s, i))
	if p == 0 || n == 0 {
		return nil
	}
	return append([]byte(nil), unsafe.Slice((*byte)(cmem(p)), n)...)
}

// column is column i of s's current row as the driver gives it: nil,
// int64, float64, string or []byte.
func (c *libConn) column(s uintptr, i int32) driver.Value {
	switch sqlite3.Xsqlite3_column_type(c.tls, s, i) {
	case sqlite3.SQLITE_INTEGER:
		return int64(sqlite3.Xsqlite3_column_int64(c.tls, s, i))
	case sqlite3.SQLITE_FLOAT:
		return sqlite3.Xsqlite3_column_double(c.tls, s, i)
	case sqlite3.SQLITE_TEXT:
		return c.text(s, i)
	case sqlite3.SQLITE_BLOB:
		p := sqlite3.Xsqlite3_column_blob(c.tls, s, i)
		n := int(sqlite3.Xsqlite3_column_bytes(c.tls, s, i))
		b := make([]byte, n)
		if p != 0 {
			copy(b, unsafe.Slice((*byte)(cmem(p)), n))
		}
		return b
	default:
		return nil
	}
}

// cmem is p, an address in libc's heap or SQLite's memory (outside Go's
// heap: never moved, never collected), as a pointer Go can read through.
// It is what unsafe.Pointer(p) would be; reading the address through a
// *unsafe.Pointer says to go vet that p is not a Go pointer kept as an
// integer.
func cmem(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
