package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/payd-engine/payd/engine"
)

// auditEntryView is one entry of the audit log.
type auditEntryView struct {
	AuditID string            `json:"audit_id"`
	Time    string            `json:"time"`
	Actor   string            `json:"actor"`
	Action  string            `json:"action"`
	Subject string            `json:"subject"`
	Details map[string]string `json:"details,omitempty"`
}

// auditReport prints as a table when not asked for JSON.
type auditReport struct {
	OrganizationID string           `json:"organization_id"`
	Entries        []auditEntryView `json:"entries"`
}

// auditShow prints an organization's audit log, oldest first.
func auditShow(fs *flag.FlagSet) func(context.Context, *engine.Engine) (any, error) {
	org := fs.String("org", "", "organization ID")
	limit := fs.Int("limit", 0, "only the latest N entries (0: all)")
	return func(ctx context.Context, eng *engine.Engine) (any, error) {
		es, err := eng.ListAudit(ctx, *org, *limit)
		if err != nil {
			return nil, err
		}
		r := auditReport{OrganizationID: *org, Entries: []auditEntryView{}}
		for _, e := range es {
			r.Entries = append(r.Entries, auditEntryView{
				AuditID: e.ID, Time: engine.FormatTime(e.CreatedAt), Actor: e.Actor, Action: e.Action, Subject: e.Subject, Details: e.Details,
			})
		}
		return r, nil
	}
}

func (r auditReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "time\tactor\taction\tsubject\tdetails")
	for _, e := range r.Entries {
		keys := make([]string, 0, len(e.Details))
		for k := range e.Details {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var details []string
		for _, k := range keys {
			details = append(details, k+"="+strconv.Quote(e.Details[k]))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time, e.Actor, e.Action, e.Subject, strings.Join(details, " "))
	}
	return tw.Flush()
}
