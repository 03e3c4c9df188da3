package transport

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/provider/smsinbox"
)

// Devices is an SMS inbox (provider/smsinbox). When set, the API serves
// the endpoints its forwarder apps post to, authenticated by a device token
// (not an API key): POST {prefix}/v1/devices/sms and /v1/devices/heartbeat.
type Devices interface {
	Authenticate(ctx context.Context, token string) (*smsinbox.Device, error)
	Heartbeat(ctx context.Context, d *smsinbox.Device) (time.Time, error)
	Ingest(ctx context.Context, d *smsinbox.Device, in smsinbox.Incoming) (*smsinbox.SMS, bool, error)
}

func (s *server) authenticateDevice(w http.ResponseWriter, r *http.Request) (*smsinbox.Device, error) {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, engine.Errorf(engine.CodeUnauthorized, "missing_device_token")
	}
	d, err := s.devices.Authenticate(r.Context(), token)
	if err != nil {
		return nil, err
	}
	// A device shares the default rate, in a bucket of its own: a phone
	// gets a few SMS a minute, so a flood is a broken or stolen forwarder.
	if ok, wait := s.limiters[classDefault].allow("device " + d.ID); !ok {
		secs := max(1, int(math.Ceil(wait.Seconds())))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		return nil, engine.Errorf(codeRateLimited, "too many requests for this device: retry after %d s", secs)
	}
	return d, nil
}

// ingestSMS serves POST {prefix}/v1/devices/sms with {"sender", "body",
// "received_at"}: 201 with what payd made of a new message, 200 for a copy
// of one it has (a forwarder's retry is safe).
func (s *server) ingestSMS(w http.ResponseWriter, r *http.Request) error {
	dev, err := s.authenticateDevice(w, r)
	if err != nil {
		return err
	}
	o, err := readObject(r, "sender", "body", "received_at")
	if err != nil {
		return err
	}
	var in smsinbox.Incoming
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
	m, created, err := s.devices.Ingest(r.Context(), dev, in)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	writeJSON(w, status, smsinbox.NewSMSView(m, false))
	return nil
}

// deviceHeartbeat serves POST {prefix}/v1/devices/heartbeat: the device is
// alive, and its wallets stay in the recipient pool until live_until.
func (s *server) deviceHeartbeat(w http.ResponseWriter, r *http.Request) error {
	dev, err := s.authenticateDevice(w, r)
	if err != nil {
		return err
	}
	if r.ContentLength != 0 { // an empty body or {}
		if _, err := readObject(r); err != nil {
			return err
		}
	}
	until, err := s.devices.Heartbeat(r.Context(), dev)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"device_id": dev.ID, "live_until": engine.FormatTime(until)})
	return nil
}
