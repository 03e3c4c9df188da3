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
// "DI5276PLJY", Nagad "75XVTPVI", Upay "01JYG4GET7", Rocket "6022415176".
var idLength = map[string]int{
	ChannelBkash:  10,
	ChannelNagad:  8,
	ChannelUpay:   10,
	ChannelRocket: 10,
}

// parseTransactionID checks that id looks like channel's transaction IDs:
// upper-case ASCII letters and digits (Rocket: digits only), of the
// channel's length.
func parseTransactionID(channel, id string) (string, error) {
	want := idLength[channel]
	ok := len(id) == want
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = '0' <= c && c <= '9' || channel != ChannelRocket && 'A' <= c && c <= 'Z'
	}
	switch {
	case !ok && channel == ChannelRocket:
		return "", fmt.Errorf("transaction ID %q is not %d digits", id, want)
	case !ok:
		return "", fmt.Errorf("transaction ID %q is not %d upper-case letters and digits", id, want)
	}
	return id, nil
}

// parseRocketAmount parses an amount as Rocket prints it after "Tk": plain
// ("100.00", "26,900.00"), after a full stop ("Tk.20.00" is 20.00), or as a
// bare fraction ("Tk.00" is 0). When a printed figure reads as two different
// amounts ("Tk.50": 50 after a stop, or 0.50), it is refused.
func parseRocketAmount(what, s string, maxDecimals int) (decimal.Decimal, error) {
	rest, dotted := strings.CutPrefix(s, ".")
	if !dotted {
		return parseAmount(what, s, maxDecimals)
	}
	afterStop, errStop := parseAmount(what, rest, maxDecimals)
	var fraction decimal.Decimal
	errFraction := fmt.Errorf("%s %q is not a well-formed amount", what, s)
	if rest != "" && strings.Trim(rest, "0123456789") == "" {
		fraction, errFraction = parseAmount(what, "0"+s, maxDecimals)
	}
	switch {
	case errStop == nil && errFraction == nil && !afterStop.Equal(fraction):
		return decimal.Decimal{}, fmt.Errorf("%s %q is ambiguous: %s or %s", what, s, afterStop, fraction)
	case errStop == nil:
		return afterStop, nil
	case errFraction == nil:
		return fraction, nil
	}
	return decimal.Decimal{}, errStop
}

// rocketAccountRE is the other side of a Rocket transaction as printed: a
// masked account ("***946", "**271", "*842", "***00001") or a whole Rocket
// account number, which is the holder's 11-digit mobile number followed by
// one check digit ("017559717268").
var rocketAccountRE = regexp.MustCompile(`^(?:\*+[0-9]{1,6}|(01[3-9][0-9]{8})[0-9])$`)

// parseRocketAccount returns the account as printed and, for a whole
// account number, the mobile number it belongs to.
func parseRocketAccount(s string) (account, phone string, err error) {
	g := rocketAccountRE.FindStringSubmatch(s)
	if g == nil {
		return "", "", fmt.Errorf("account %q is neither masked nor a 12-digit Rocket account", s)
	}
	return s, g[1], nil
}

// rocketTimeRE is Rocket's time: dd-MON-yy hh:mm:ss am, 12-hour.
var rocketTimeRE = regexp.MustCompile(`^([0-9]{2})-([A-Z]{3})-([0-9]{2})\s+([0-9]{2}):([0-9]{2}):([0-9]{2})\s*([ap])m$`)

var rocketMonths = map[string]time.Month{
	"JAN": time.January, "FEB": time.February, "MAR": time.March, "APR": time.April,
	"MAY": time.May, "JUN": time.June, "JUL": time.July, "AUG": time.August,
	"SEP": time.September, "OCT": time.October, "NOV": time.November, "DEC": time.December,
}

// parseRocketTime parses Rocket's "27-DEC-25 08:43:52 pm" as a second in
// Dhaka. The two-digit year is 20yy; 12 am is midnight, 12 pm noon.
func parseRocketTime(s string) (time.Time, error) {
	g := rocketTimeRE.FindStringSubmatch(s)
	if g == nil {
		return time.Time{}, fmt.Errorf("time %q is not dd-MON-yy hh:mm:ss am", s)
	}
	month, ok := rocketMonths[g[2]]
	if !ok {
		return time.Time{}, fmt.Errorf("time %q has no month %q", s, g[2])
	}
	var n [5]int
	for i, j := range []int{1, 3, 4, 5, 6} {
		n[i], _ = strconv.Atoi(g[j]) // two ASCII digits: cannot fail
	}
	day, year, hour, minute, second := n[0], 2000+n[1], n[2], n[3], n[4]
	if hour < 1 || hour > 12 || minute > 59 || second > 59 {
		return time.Time{}, fmt.Errorf("time %q is not a valid date and time", s)
	}
	hour %= 12
	if g[7] == "p" {
		hour += 12
	}
	t := time.Date(year, month, day, hour, minute, second, 0, dhaka)
	if t.Day() != day || t.Month() != month {
		return time.Time{}, fmt.Errorf("time %q is not a valid date and time", s)
	}
	return t, nil
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

// maxReference is the longest reference accepted, in bytes of its collapsed
// text.
const maxReference = 64

// parseReference returns the sender's reference with its spacing collapsed,
// or "" for none: absent, blank, "N/A", "NA" (Rocket's "Ref No: NA") or "-".
func parseReference(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if strings.EqualFold(s, "N/A") || s == "NA" || s == "-" {
		return ""
	}
	return s
}
