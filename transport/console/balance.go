package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/payd-engine/payd/engine"
	"github.com/payd-engine/payd/internal/export"
)

// The balance page: the organization's balance and its latest movements,
// the owner's adjustments by hand (each with a reason), and the exports.

type balanceData struct {
	Balance   *engine.Balance
	Movements []*engine.BalanceTransaction
	// JournalID and JournalMAC make the adjustment form one adjustment
	// however often it is sent: the ID is the journal's, chosen when the
	// form is shown, and the MAC binds it to this session and
	// organization, so that no other ID can be named.
	JournalID, JournalMAC string
	Form                  map[string]string
	Errors                map[string]string
	Kinds                 []string
}

// exportKinds are the downloads, as the admin CLI's exports.
var exportKinds = []string{"deposits", "withdrawals", "refunds", "ledger"}

func (s *server) balance(w http.ResponseWriter, r *http.Request, q *request) error {
	return s.renderBalance(w, r, q, http.StatusOK, balanceData{})
}

func (s *server) renderBalance(w http.ResponseWriter, r *http.Request, q *request, status int, data balanceData) error {
	data.Kinds = exportKinds
	if q.org != "" {
		var err error
		if data.Balance, err = s.eng.GetBalance(r.Context(), q.org); err != nil {
			return err
		}
		page, err := s.eng.ListBalanceTransactions(r.Context(), engine.ListParams{OrganizationID: q.org, Limit: 20})
		if err != nil {
			return err
		}
		data.Movements = page.Data
		data.JournalID = engine.NewID(engine.PrefixJournal, s.eng.Now())
		data.JournalMAC = journalMAC(q, data.JournalID)
	}
	return s.render(w, r, q, status, "balance", "balance", data)
}

func journalMAC(q *request, id string) string {
	m := hmac.New(sha256.New, []byte(q.token))
	m.Write([]byte("payd console adjustment\x00" + q.org + "\x00" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// balanceAdjust credits or debits the available balance by hand, with a
// reason: the owner's, as it makes money appear or go.
func (s *server) balanceAdjust(w http.ResponseWriter, r *http.Request, q *request) error {
	if q.org == "" {
		return errNotFound
	}
	f := r.PostForm
	id := f.Get("journal_id")
	if !hmac.Equal([]byte(f.Get("journal_mac")), []byte(journalMAC(q, id))) {
		return errForbidden
	}
	amount := strings.TrimSpace(f.Get("amount"))
	if f.Get("direction") == "debit" && !strings.HasPrefix(amount, "-") {
		amount = "-" + amount
	}
	_, err := s.eng.AdjustBalance(q.ctx(r), engine.AdjustParams{OrganizationID: q.org, Amount: amount, Reason: f.Get("reason"), JournalID: id})
	if engine.ErrorCode(err) == engine.CodeConflict {
		// The same form again: the adjustment is made, once.
		return done(w, r, q, "/console/balance", "done_adjust_again")
	} else if field, msg, ok := fieldError(q.lang, err); ok {
		return s.renderBalance(w, r, q, http.StatusBadRequest, balanceData{
			Form: map[string]string{"amount": f.Get("amount"), "reason": f.Get("reason"), "direction": f.Get("direction")}, Errors: map[string]string{field: msg}})
	} else if err != nil {
		return err
	}
	return done(w, r, q, "/console/balance", "done_adjust")
}

// exportDownload streams an export of the organization's rows as a file,
// through the admin CLI's writer (CSV cells that a spreadsheet would run
// are quoted).
func (s *server) exportDownload(w http.ResponseWriter, r *http.Request, q *request) error {
	kind := r.PathValue("kind")
	if q.org == "" || !containsString(exportKinds, kind) {
		return errNotFound
	}
	query := r.URL.Query()
	format := query.Get("format")
	if format != export.JSONL {
		format = export.CSV
	}
	p := engine.ListParams{OrganizationID: q.org}
	var err error
	if p.CreatedGTE, err = parseDay("from", query.Get("from")); err != nil {
		return err
	}
	if p.CreatedLT, err = parseDay("to", query.Get("to")); err != nil {
		return err
	}
	if !p.CreatedLT.IsZero() {
		p.CreatedLT = p.CreatedLT.Add(24 * time.Hour) // the whole of the last day
	}
	ctype := "text/csv; charset=utf-8"
	if format == export.JSONL {
		ctype = "application/x-ndjson"
	}
	name := kind + "-" + s.eng.Now().In(engine.Dhaka).Format("2006-01-02") + "." + format
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	// The rows stream after the header: an error midway is logged, and the
	// file ends short (it cannot become an error page any more).
	if err := export.Write(r.Context(), s.eng, kind, format, p, w); err != nil {
		s.logger.ErrorContext(r.Context(), "console: export", "kind", kind, "err", err)
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
