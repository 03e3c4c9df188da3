package transport

import (
	"bytes"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
)

// The payloads of off-the-shelf Android SMS forwarders, each at
// a path of its own, so a body is never guessed at: docs/forwarders/ has
// each app's setup. Each app's own members are read as its source builds
// them; members payd does not use are ignored (an app's next version may
// add some), duplicates are refused. Every SMS that passes the request's
// checks gets the one answer of POST /v1/devices/sms.

// Forwarder apps' paths under {prefix}/v1/devices/forwarders/.
const (
	// ForwarderSMSToURL is Incoming SMS to URL forwarder
	// (bogkonstantin/android_income_sms_gateway_webhook) and the apps built
	// on it: its JSON template's from, text, sentStamp and receivedStamp
	// (epoch milliseconds) and sim ("sim1", "sim2", "undetected").
	ForwarderSMSToURL = "sms-to-url"
	// ForwarderSMSGateway is SMS Gateway for Android
	// (capcom6/android-sms-gateway): its webhook envelope, sms:received
	// and system:ping (a heartbeat), signed (X-Signature, X-Timestamp).
	ForwarderSMSGateway = "sms-gateway"
	// ForwarderSmsForwarder is SmsForwarder (pppscn/SmsForwarder): its
	// webhook's request parameters as a form or a JSON template, signed
	// when the device has a secret (timestamp, sign).
	ForwarderSmsForwarder = "smsforwarder"
)

// Signature schemes, as the inbox names them.
const (
	schemeSMSGateway   = "sms-gateway"
	schemeSmsForwarder = "smsforwarder"
)

func (s *server) forwarderRoutes(mux *http.ServeMux) {
	s.route(mux, "/v1/devices/forwarders/"+ForwarderSMSToURL, map[string]handlerFunc{http.MethodPost: s.forwardSMSToURL})
	s.route(mux, "/v1/devices/forwarders/"+ForwarderSMSGateway, map[string]handlerFunc{http.MethodPost: s.forwardSMSGateway})
	s.route(mux, "/v1/devices/forwarders/"+ForwarderSmsForwarder, map[string]handlerFunc{http.MethodPost: s.forwardSmsForwarder})
}

// ingestForwarded verifies a decoded post of dev and stores its SMS.
func (s *server) ingestForwarded(w http.ResponseWriter, r *http.Request, dev Device, sig Signature, in IncomingSMS) error {
	if err := s.devices.Verify(r.Context(), dev, sig); err != nil {
		return err
	}
	if err := s.devices.Ingest(r.Context(), dev, in); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, smsReceived)
	return nil
}

// forwardSMSToURL serves the JSON-template forwarder: its default template
// (ForwardingConfig.getDefaultJsonTemplate) is
//
//	{"from":"%from%","text":"%text%","sentStamp":%sentStamp%,"receivedStamp":%receivedStamp%,"sim":"%sim%"}
//
// It cannot sign; its headers setting carries the token.
func (s *server) forwardSMSToURL(w http.ResponseWriter, r *http.Request) error {
	dev, err := s.authenticateDevice(w, r)
	if err != nil {
		return err
	}
	body, err := readBody(r.Body, MaxBodyBytes)
	if err != nil {
		return err
	}
	o, err := parseObject(body)
	if err != nil {
		return err
	}
	var in IncomingSMS
	if in.Sender, err = o.string("from", true); err != nil {
		return err
	}
	if in.Body, err = o.string("text", true); err != nil {
		return err
	}
	// receivedStamp is the phone's clock when it forwarded; sentStamp the
	// network's when the message was sent.
	for _, name := range []string{"receivedStamp", "sentStamp"} {
		at, err := epochMillis(o, name)
		if err != nil {
			return err
		}
		if in.ReceivedAt.IsZero() {
			in.ReceivedAt = at
		}
	}
	sim, err := o.string("sim", false)
	if err != nil {
		return err
	}
	if in.SIMSlot, err = simSlot("sim", sim, "sim", "undetected"); err != nil {
		return err
	}
	return s.ingestForwarded(w, r, dev, Signature{}, in)
}

// forwardSMSGateway serves SMS Gateway for Android's webhooks: the
// envelope {"id", "webhookId", "event", "deviceId", "payload"}, sms:received
// with the payload {"message", "receivedAt", "messageId", "sender",
// "recipient", "simNumber", "phoneNumber"}, and system:ping. Every webhook
// is signed; its URL carries the token.
func (s *server) forwardSMSGateway(w http.ResponseWriter, r *http.Request) error {
	dev, err := s.authenticateDevice(w, r)
	if err != nil {
		return err
	}
	body, err := readBody(r.Body, MaxBodyBytes)
	if err != nil {
		return err
	}
	sig := Signature{Scheme: schemeSMSGateway, Body: body}
	if sig.MAC, err = credentialHeader(r, "X-Signature"); err != nil {
		return err
	}
	if sig.Timestamp, err = credentialHeader(r, "X-Timestamp"); err != nil {
		return err
	}
	if sig.MAC == "" || sig.Timestamp == "" {
		return engine.Errorf(engine.CodeUnauthorized, "X-Signature and X-Timestamp: are required: give the device a signing secret and set it as the app's signing key")
	}
	o, err := parseObject(body)
	if err != nil {
		return err
	}
	event, err := o.string("event", true)
	if err != nil {
		return err
	}
	switch event {
	case "system:ping":
		if err := s.devices.Verify(r.Context(), dev, sig); err != nil {
			return err
		}
		return s.heartbeat(w, r, dev)
	case "sms:received":
	default:
		return engine.Invalid("event", "payd takes sms:received and system:ping: register only those webhooks")
	}
	p, err := o.object("payload", true)
	if err != nil {
		return err
	}
	var in IncomingSMS
	if in.Body, err = p.string("message", true); err != nil {
		return err
	}
	// phoneNumber is the sender of a received message, in older versions
	// the only one.
	sender, err := p.string("sender", false)
	if err != nil {
		return err
	}
	phone, err := p.string("phoneNumber", false)
	if err != nil {
		return err
	}
	switch {
	case sender == "" && phone == "":
		return engine.Invalid("payload.sender", "is required")
	case sender != "" && phone != "" && sender != phone:
		return engine.Invalid("payload.phoneNumber", "must be the sender")
	case sender == "":
		sender = phone
	}
	in.Sender = sender
	if in.SIMSlot, err = intMember(p, "simNumber"); err != nil {
		return err
	}
	at, err := p.string("receivedAt", false)
	if err != nil {
		return err
	}
	if at != "" {
		if in.ReceivedAt, err = time.Parse(time.RFC3339, at); err != nil {
			return engine.Invalid("payload.receivedAt", "must be an ISO 8601 time with its offset")
		}
	}
	return s.ingestForwarded(w, r, dev, sig, in)
}

// forwardSmsForwarder serves SmsForwarder's webhook with the request
// parameters docs/forwarders/smsforwarder.md sets: from, org_content (the
// SMS as received: its content is its own message template), timestamp
// and sign (when the device signs), card_slot ("SIM1_<label>"), received_at.
// The app posts them as a form, or as JSON when they are a JSON template.
func (s *server) forwardSmsForwarder(w http.ResponseWriter, r *http.Request) error {
	dev, err := s.authenticateDevice(w, r)
	if err != nil {
		return err
	}
	body, err := readBody(r.Body, MaxBodyBytes)
	if err != nil {
		return err
	}
	get, err := formOrJSON(r, body)
	if err != nil {
		return err
	}
	var in IncomingSMS
	if in.Sender, err = get("from", true); err != nil {
		return err
	}
	if in.Body, err = get("org_content", false); err != nil {
		return err
	}
	if in.Body == "" {
		if content, _ := get("content", false); content != "" {
			return engine.Invalid("org_content", "is required: SmsForwarder's content is its message template, not the SMS; post org_content=[org_content] (docs/forwarders/smsforwarder.md)")
		}
		return engine.Invalid("org_content", "is required")
	}
	var sig Signature
	if sig.MAC, err = get("sign", false); err != nil {
		return err
	}
	if sig.MAC != "" {
		sig.Scheme = schemeSmsForwarder
		if sig.Timestamp, err = get("timestamp", true); err != nil {
			return err
		}
	}
	slot, err := get("card_slot", false)
	if err != nil {
		return err
	}
	if label, _, ok := strings.Cut(slot, "_"); ok || slot == "" {
		if in.SIMSlot, err = simSlot("card_slot", strings.ToLower(label), "sim", ""); err != nil {
			return err
		}
	} else {
		return engine.Invalid("card_slot", "must be SmsForwarder's [card_slot], e.g. SIM1_Robi")
	}
	at, err := get("received_at", false)
	if err != nil {
		return err
	}
	if at != "" {
		if in.ReceivedAt, err = time.Parse(time.RFC3339, at); err != nil {
			return engine.Invalid("received_at", "must be an RFC 3339 time: [receive_time:yyyy-MM-dd'T'HH:mm:ssXXX]")
		}
	}
	return s.ingestForwarded(w, r, dev, sig, in)
}

// formOrJSON returns the members of a form or JSON body: JSON when the
// content type says so or the body is an object, as SmsForwarder decides.
// A member sent twice is refused.
func formOrJSON(r *http.Request, body []byte) (func(name string, required bool) (string, error), error) {
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType == "application/json" || bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		o, err := parseObject(body)
		if err != nil {
			return nil, err
		}
		return func(name string, required bool) (string, error) {
			if raw, ok := o.fields[name]; ok && len(raw) > 0 && raw[0] >= '0' && raw[0] <= '9' {
				return string(raw), nil // [timestamp] unquoted
			}
			return o.string(name, required)
		}, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, engine.Invalid("body", "must be a form (application/x-www-form-urlencoded) or a JSON object")
	}
	return func(name string, required bool) (string, error) {
		switch vs := form[name]; {
		case len(vs) > 1:
			return "", engine.Invalid(name, "must be sent once")
		case len(vs) == 0 || vs[0] == "":
			if required {
				return "", engine.Invalid(name, "is required")
			}
			return "", nil
		default:
			return vs[0], nil
		}
	}, nil
}

// simSlot reads a SIM slot named prefix+N (N 1 to 9); none is 0.
func simSlot(field, v, prefix, none string) (int, error) {
	if v == "" || v == none {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(v, prefix))
	if !strings.HasPrefix(v, prefix) || err != nil || n < 1 || n > 9 || len(v) != len(prefix)+1 {
		return 0, engine.Invalid(field, "must be "+prefix+"1, "+prefix+"2, ... or "+strconv.Quote(none))
	}
	return n, nil
}

// intMember returns a small non-negative integer member; 0 when absent or
// null.
func intMember(o *object, name string) (int, error) {
	raw, ok := o.fields[name]
	if !ok || isNull(raw) {
		return 0, nil
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 0 || n > 9 {
		return 0, engine.Invalid(o.path+name, "must be a SIM slot number, 1 to 9")
	}
	return n, nil
}

// minEpoch is the earliest time a phone's stamp can mean: earlier is a
// stamp in seconds, or none.
var minEpoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// epochMillis returns a member holding epoch milliseconds, as a number or
// a string of digits; the zero time when absent.
func epochMillis(o *object, name string) (time.Time, error) {
	raw, ok := o.fields[name]
	if !ok || isNull(raw) {
		return time.Time{}, nil
	}
	digits := strings.Trim(string(raw), `"`)
	ms, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || len(digits) > 15 || time.UnixMilli(ms).Before(minEpoch) {
		return time.Time{}, engine.Invalid(o.path+name, "must be epoch milliseconds")
	}
	return time.UnixMilli(ms), nil
}
