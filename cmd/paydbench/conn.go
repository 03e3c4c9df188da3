package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/payd-engine/payd/transport/signing"
)

// The client's own HTTP/1.1: each request is written by hand in one write
// on a keep-alive connection taken from a free list, and its answer read
// with net/http's parser, all on the calling goroutine. net/http's
// Transport hands every request and answer between three goroutines (the
// caller's, the connection's writer and its reader); on this 2-core
// machine that scheduling was a fifth of the load tool's CPU, CPU the
// measured payd did not get. What payd reads is what a client sends: the
// method, the target, the Authorization header, the signature headers and
// the exact body bytes signed.

// requestTimeout bounds one request, as the http.Client's Timeout did.
const requestTimeout = 30 * time.Second

// conn is one keep-alive connection to payd.
type conn struct {
	nc     net.Conn
	br     *bufio.Reader
	wb     []byte // the request being written, reused
	reused bool   // it has carried a request before
}

// connPool is the free list of idle connections.
type connPool struct {
	addr string // host:port
	idle chan *conn
}

func newConnPool(addr string, size int) *connPool {
	return &connPool{addr: addr, idle: make(chan *conn, size)}
}

func (p *connPool) get() (*conn, error) {
	select {
	case cn := <-p.idle:
		return cn, nil
	default:
	}
	nc, err := net.DialTimeout("tcp", p.addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, 16<<10), wb: make([]byte, 0, 1024)}, nil
}

func (p *connPool) put(cn *conn) {
	cn.reused = true
	select {
	case p.idle <- cn:
	default:
		cn.nc.Close()
	}
}

// closeIdle closes the idle connections.
func (p *connPool) closeIdle() {
	for {
		select {
		case cn := <-p.idle:
			cn.nc.Close()
		default:
			return
		}
	}
}

// roundTrip sends one request for path (below the client's base) and
// reads the whole answer into buf. A connection payd closed while it was
// idle fails before payd read anything; the request is then sent once more
// on a new one, as net/http's Transport does.
func (c *client) roundTrip(method, path string, body []byte, sign bool, buf *bytes.Buffer) (int, error) {
	for attempt := 0; ; attempt++ {
		cn, err := c.conns.get()
		if err != nil {
			return 0, err
		}
		status, keep, err := c.exchange(cn, method, path, body, sign, buf)
		if err == nil {
			if keep {
				c.conns.put(cn)
			} else {
				cn.nc.Close()
			}
			return status, nil
		}
		cn.nc.Close()
		if attempt == 0 && cn.reused && closedIdle(err) {
			continue
		}
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
}

// closedIdle tells whether err is a connection the peer had closed.
func closedIdle(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// exchange writes the request on cn and reads its answer. keep is false
// when the connection cannot carry another request.
func (c *client) exchange(cn *conn, method, path string, body []byte, sign bool, buf *bytes.Buffer) (status int, keep bool, err error) {
	b := cn.wb[:0]
	b = append(append(append(b, method...), ' '), c.prefix...)
	b = append(append(b, path...), " HTTP/1.1\r\nHost: "...)
	b = append(append(b, c.host...), "\r\nUser-Agent: paydbench\r\nAuthorization: "...)
	b = append(append(b, c.bearer...), "\r\n"...)
	if sign {
		var tsBuf [20]byte
		ts := strconv.AppendInt(tsBuf[:0], time.Now().Unix(), 10)
		b = append(append(append(b, signing.TimestampHeader...), ": "...), ts...)
		b = append(append(b, "\r\n"...), signing.SignatureHeader...)
		b = append(append(b, ": "...), signing.Sign(c.secret, string(ts), method, c.prefix+path, body)...)
		b = append(b, "\r\n"...)
	}
	if method != http.MethodGet {
		b = append(strconv.AppendInt(append(b, "Content-Length: "...), int64(len(body)), 10), "\r\n"...)
	}
	b = append(append(b, "\r\n"...), body...)
	cn.wb = b
	if err := cn.nc.SetDeadline(time.Now().Add(requestTimeout)); err != nil {
		return 0, false, err
	}
	if _, err := cn.nc.Write(b); err != nil {
		return 0, false, err
	}
	res, err := http.ReadResponse(cn.br, nil)
	if err != nil {
		return 0, false, err
	}
	_, err = buf.ReadFrom(res.Body)
	res.Body.Close()
	if err != nil {
		return 0, false, err
	}
	return res.StatusCode, !res.Close, nil
}
