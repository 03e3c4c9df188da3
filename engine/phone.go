package engine

import "regexp"

// localMobile is a Bangladesh mobile number in its local 11-digit form.
var localMobile = regexp.MustCompile(`^01[3-9][0-9]{8}$`)

// NormalizePhone accepts a Bangladesh mobile number as 01XNNNNNNNN,
// 8801XNNNNNNNN or +8801XNNNNNNNN and returns the local 11-digit form.
func NormalizePhone(field, s string) (string, error) {
	local := s
	switch {
	case len(s) == 14 && s[:4] == "+880":
		local = s[3:]
	case len(s) == 13 && s[:3] == "880":
		local = s[2:]
	}
	if !localMobile.MatchString(local) {
		return "", Invalid(field, "must be a Bangladesh mobile number (01XNNNNNNNN, 8801XNNNNNNNN or +8801XNNNNNNNN)")
	}
	return local, nil
}
