package smsparse

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// dhaka is Bangladesh Standard Time: UTC+6 all year, no daylight saving
// since 2009. A fixed zone, so parsing does not depend on tzdata.
var dhaka = time.FixedZone("Asia/Dhaka", 6*60*60)

// amountRE is a well-formed printed amount: no leading zeros, thousands
// separators only in western groups of three ("121,710.33"), or none at all
// ("110060.81"), and an optional fraction.
var amountRE = regexp.MustCompile(`^(?:0|[1-9][0-9]{0,2}(?:,[0-9]{3})+|[1-9][0-9]*)(?:\.([0-9]+))?$`)

// parseAmount parses a printed amount exactly, with at most maxDecimals
// decimals. what names the field in the error.
func parseAmount(what, s string, maxDecimals int) (decimal.Decimal, error) {
	g := amountRE.FindStringSubmatch(s)
	switch {
	case g == nil && strings.Contains(s, ","):
		return decimal.Decimal{}, fmt.Errorf("%s %q has misplaced thousands separators", what, s)
	case g == nil:
		return decimal.Decimal{}, fmt.Errorf("%s %q is not a well-formed amount", what, s)
	case len(g[1]) > maxDecimals:
		return decimal.Decimal{}, fmt.Errorf("%s %q has more than %d decimals", what, s, maxDecimals)
	}
	d, err := decimal.NewFromString(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		return decimal.Decimal{}, fmt.Errorf("%s %q: %v", what, s, err)
	}
	return d, nil
}

// mobileRE is a Bangladeshi mobile number in its 11-digit local form; the
// third digit is the operator (3–9).
var mobileRE = regexp.MustCompile(`^01[3-9][0-9]{8}$`)

// normalizePhone returns a mobile number printed as 01XXXXXXXXX,
// +8801XXXXXXXXX or 8801XXXXXXXXX in the 11-digit local form.
func normalizePhone(s string) (string, error) {
	local := s
	switch {
	case strings.HasPrefix(s, "+880"):
		local = s[len("+88"):]
	case strings.HasPrefix(s, "880"):
		local = s[len("88"):]
	}
	if !mobileRE.MatchString(local) {
		return "", fmt.Errorf("counterparty %q is not a Bangladeshi mobile number", s)
	}
	return local, nil
}

// idLength is the length of a transaction ID as each channel prints it: bKash
// "DI5276PLJY", Nagad "75XVTPVI", Upay "01JYG4GET7".
var idLength = map[string]int{
	ChannelBkash: 10,
	ChannelNagad: 8,
	ChannelUpay:  10,
}

// parseTransactionID checks that id looks like channel's transaction IDs:
// upper-case ASCII letters and digits, of the channel's length.
func parseTransactionID(channel, id string) (string, error) {
	want := idLength[channel]
	ok := len(id) == want
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = '0' <= c && c <= '9' || 'A' <= c && c <= 'Z'
	}
	if !ok {
		return "", fmt.Errorf("transaction ID %q is not %d upper-case letters and digits", id, want)
	}
	return id, nil
}

// timeRE is the time every format prints: dd/mm/yyyy hh:mm, 24-hour.
var timeRE = regexp.MustCompile(`^([0-9]{2})/([0-9]{2})/([0-9]{4})\s+([0-9]{2}):([0-9]{2})$`)

// parseTime parses a message's time as a minute in Dhaka. The date must
// exist and the year be plausible for a mobile-wallet message.
func parseTime(s string) (time.Time, error) {
	g := timeRE.FindStringSubmatch(s)
	if g == nil {
		return time.Time{}, fmt.Errorf("time %q is not dd/mm/yyyy hh:mm", s)
	}
	var n [5]int
	for i := range n {
		n[i], _ = strconv.Atoi(g[i+1]) // two or four ASCII digits: cannot fail
	}
	day, month, year, hour, minute := n[0], n[1], n[2], n[3], n[4]
	t := time.Date(year, time.Month(month), day, hour, minute, 0, 0, dhaka)
	if year < 2000 || year > 2099 || hour > 23 || minute > 59 ||
		t.Day() != day || int(t.Month()) != month || t.Year() != year {
		return time.Time{}, fmt.Errorf("time %q is not a valid date and time", s)
	}
	return t, nil
}

// parseReference returns the sender's reference with its spacing collapsed,
// or "" for none: absent, blank, "N/A" or "-".
func parseReference(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if strings.EqualFold(s, "N/A") || s == "-" {
		return ""
	}
	return s
}
