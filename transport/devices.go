package transport

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
)

// DefaultDeviceRate bounds each device's posts: a phone gets a few SMS a
// minute, and a forwarder back online flushes its backlog in bursts of 60,
// so more is a broken or stolen forwarder (or a forger searching for a
// balance one guess at a time).
var DefaultDeviceRate = Rate{PerSecond: 1, Burst: 60}

// Devices is an SMS inbox (provider/smsinbox). When set, the API serves
// the endpoints its forwarder apps post to, authenticated by a device token
// (not an API key): POST {prefix}/v1/devices/sms and /v1/devices/heartbeat,
// and the off-the-shelf apps' own payloads at /v1/devices/forwarders/...
// (forwarders.go). The token is the Authorization header's bearer token,
// or, for an app that cannot set headers, the URL's token parameter, which
// no log shows (the request log writes the path alone).
//
// A device's answers tell it nothing about a wallet: a device token on a
// stolen phone, or a forwarder app that leaks, must not learn the balance
// chain the inbox rests on. Every SMS that passes the request's checks is
// answered the same way, whatever payd made of it (accepted, held, a copy,
// a conflict, an unknown format): what it was is the operator's, in payd
// admin sms list and the log.
//
// The types are the transport's own, so that the transport imports no
// provider: the wiring (cmd/payd) adapts the inbox to them.
type Devices interface {
	// Authenticate returns the device whose bearer token is token, or an
	// engine error (unauthorized) to answer with.
	Authenticate(ctx context.Context, token string) (Device, error)
	// Verify checks the signature of a post of d, or that d need not sign
	// (sig.Scheme ""): an engine error (unauthorized) to answer with.
	Verify(ctx context.Context, d Device, sig Signature) error
	// Heartbeat records that d is alive and returns until when its wallets
	// stay in the recipient pool.
	Heartbeat(ctx context.Context, d Device) (liveUntil time.Time, err error)
	// Ingest stores an SMS d forwarded. A copy of one stored is no error.
	Ingest(ctx context.Context, d Device, in IncomingSMS) error
}

// Device is a device Authenticate let in.
type Device struct {
	// ID is the device's ID: its rate limit bucket and its heartbeat's
	// answer.
	ID string
	// Inbox is the inbox's own record of the device, handed back to
	// Heartbeat and Ingest untouched.
	Inbox any
}

// IncomingSMS is an SMS as a device posts it.
type IncomingSMS struct {
	Sender string
	Body   string
	// ReceivedAt is when the phone received it; zero means now.
	ReceivedAt time.Time
	// SIMSlot is the SIM slot that received it (1, 2, ...); 0 if the app
	// did not say.
	SIMSlot int
}

// Signature is what a signed post of a forwarder app carries: Scheme
// names the app's way of signing ("" for an unsigned post).
type Signature struct {
	Scheme, Timestamp, MAC string
	// Body is the request body, as received.
	Body []byte
}

// deviceToken returns a post's device token: the bearer token, or the
// URL's token parameter, sent once and in one place only.
func deviceToken(r *http.Request) (string, error) {
	authorization, err := credentialHeader(r, "Authorization")
	if err != nil {
		return "", err
	}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", engine.Invalid("query", "is not a valid URL query")
	}
	switch inURL := query["token"]; {
	case len(inURL) > 1:
		return "", engine.Invalid("token", "must be sent once")
	case len(inURL) == 1 && authorization != "":
		return "", engine.Invalid("token", "send the device token once: in the Authorization header or in the URL")
	case len(inURL) == 1:
		return strings.TrimSpace(inURL[0]), nil
	}
	scheme, token, _ := strings.Cut(authorization, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", nil
	}
	return strings.TrimSpace(token), nil
}

func (s *server) authenticateDevice(w http.ResponseWriter, r *http.Request) (Device, error) {
	token, err := deviceToken(r)
	if err != nil {
		return Device{}, err
	}
	if token == "" {
		return Device{}, engine.Errorf(engine.CodeUnauthorized, "missing_device_token")
	}
	d, err := s.devices.Authenticate(r.Context(), token)
	if err != nil {
		return Device{}, err
	}
	// Each device has a bucket of its own (RateLimits.Device).
	if ok, wait := s.limiters[classDevice].allow(d.ID); !ok {
		secs := max(1, int(math.Ceil(wait.Seconds())))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		return Device{}, engine.Errorf(codeRateLimited, "too many requests for this device: retry after %d s", secs)
	}
	return d, nil
}

// smsReceived is the one answer to a stored SMS.
var smsReceived = map[string]bool{"received": true}

// ingestSMS serves POST {prefix}/v1/devices/sms with {"sender", "body",
// "received_at"}: 200 {"received": true} once the message is stored, be it
// new or a copy (a forwarder's retry is safe), and whatever it counts for.
func (s *server) ingestSMS(w http.ResponseWriter, r *http.Request) error {
	dev, err := s.authenticateDevice(w, r)
	if err != nil {
		return err
	}
	if err := s.devices.Verify(r.Context(), dev, Signature{}); err != nil {
		return err
	}
	o, err := readObject(r, "sender", "body", "received_at")
	if err != nil {
		return err
	}
	var in IncomingSMS
	if in.Sender, err = o.string("sender", true); err != nil {
		return err
	}
	if in.Body, err = o.string("body", true); err != nil {
		return err
	}
	received, err := o.string("received_at", false)
	if err != nil {
		return err
	}
	if received != "" {
		if in.ReceivedAt, err = time.Parse(time.RFC3339, received); err != nil {
			return engine.Invalid("received_at", "must be an RFC 3339 time, e.g. 2026-11-21T14:03:05+06:00")
		}
	}
	if err := s.devices.Ingest(r.Context(), dev, in); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, smsReceived)
	return nil
}

// deviceHeartbeat serves POST {prefix}/v1/devices/heartbeat: the device is
// alive, and its wallets stay in the recipient pool until live_until.
func (s *server) deviceHeartbeat(w http.ResponseWriter, r *http.Request) error {
	dev, err := s.authenticateDevice(w, r)
	if err != nil {
		return err
	}
	if err := s.devices.Verify(r.Context(), dev, Signature{}); err != nil {
		return err
	}
	if r.ContentLength != 0 { // an empty body or {}
		if _, err := readObject(r); err != nil {
			return err
		}
	}
	return s.heartbeat(w, r, dev)
}

// heartbeat records a report of dev and answers until when its wallets
// stay in the pool.
func (s *server) heartbeat(w http.ResponseWriter, r *http.Request, dev Device) error {
	until, err := s.devices.Heartbeat(r.Context(), dev)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"device_id": dev.ID, "live_until": engine.FormatTime(until)})
	return nil
}
