package decode

import (
	"math"
	"reflect"
	"strconv"
	"time"
)

// speedate's limits for unix timestamps.
const (
	msWatershed = 20_000_000_000  // larger magnitudes are milliseconds
	unix0000    = -62_167_219_200 // 0000-01-01T00:00:00
	unix9999    = 253_402_300_799 // 9999-12-31T23:59:59
	microsInSec = 1_000_000
)

// speedate's and Python's error texts.
const (
	errTooShort    = "input is too short"
	errYear        = "invalid character in year"
	errDateSep     = "invalid date separator, expected `-`"
	errMonth       = "invalid character in month"
	errDay         = "invalid character in day"
	errMonthRange  = "month value is outside expected range of 1-12"
	errDayRange    = "day value is outside expected range"
	errExtra       = "unexpected extra characters at the end of the input"
	errTooSmall    = "dates before 0000 are not supported as unix timestamps"
	errTooLarge    = "dates after 9999 are not supported as unix timestamps"
	errYearZero    = "year 0 is out of range"
	msgDatetime    = "Input should be a valid datetime"
	msgDatetimeErr = "Input should be a valid datetime, "
	msgFromDateErr = "Input should be a valid datetime or date, "
)

// datetime is a parsed speedate DateTime; offset is nil when naive.
type datetime struct {
	year, month, day, hour, minute, second, micro int
	offset                                        *int
}

// utc is the offset of datetimes made from unix timestamps.
func utc() *int { z := 0; return &z }

// validateTime validates node i as a pydantic datetime in lax mode.
func (st *state) validateTime(t *tape, i int, dst reflect.Value) {
	n := &t.nodes[i]
	var dt datetime
	var msg string
	fromDate := false
	switch n.kind {
	case kindInt:
		dt, msg = intAsDatetime(t.lit(i))
	case kindFloat:
		dt, msg = floatAsDatetime(t.float(i))
	case kindString:
		dt, msg, fromDate = strAsDatetime(t.str(i))
	default:
		st.add(t, i, "datetime_type", msgDatetime, nil)
		return
	}
	if msg == "" && dt.year == 0 {
		msg, fromDate = errYearZero, false // Python's datetime rejects it
	}
	switch {
	case msg == "":
		dst.Set(reflect.ValueOf(dt.time()))
	case fromDate:
		st.add(t, i, "datetime_from_date_parsing", msgFromDateErr+msg, map[string]any{"error": msg})
	default:
		st.add(t, i, "datetime_parsing", msgDatetimeErr+msg, map[string]any{"error": msg})
	}
}

// time converts dt; a naive datetime is taken as UTC.
func (dt datetime) time() time.Time {
	loc := time.UTC
	if dt.offset != nil && *dt.offset != 0 {
		loc = time.FixedZone("", *dt.offset)
	}
	return time.Date(dt.year, time.Month(dt.month), dt.day, dt.hour, dt.minute, dt.second, dt.micro*1000, loc)
}

// intAsDatetime handles a Python int: a unix timestamp.
func intAsDatetime(lit string) (datetime, string) {
	v, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		if lit[0] == '-' {
			return datetime{}, errTooSmall
		}
		return datetime{}, errTooLarge
	}
	return fromTimestamp(v, 0)
}

// floatAsDatetime handles a Python float as pydantic 2.13 does, keeping
// its treatment of the fraction of negative timestamps.
func floatAsDatetime(f float64) (datetime, string) {
	frac := math.Abs(f - math.Trunc(f))
	scale := 1e6
	if math.Abs(f) > msWatershed {
		scale = 1e3
	}
	return fromTimestamp(saturateInt64(math.Floor(f)), saturateUint32(math.Round(frac*scale)))
}

// saturateInt64 is Rust's `f as i64`.
func saturateInt64(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= 1<<63:
		return math.MaxInt64
	case f <= -(1 << 63):
		return math.MinInt64
	}
	return int64(f)
}

// saturateUint32 is Rust's `f as u32`.
func saturateUint32(f float64) uint32 {
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(f)
}

// fromTimestamp is speedate's DateTime::from_timestamp_with_config.
func fromTimestamp(ts int64, micro uint32) (datetime, string) {
	if ts == math.MinInt64 {
		return datetime{}, errTooSmall
	}
	sec, extra := ts, int64(0)
	if ts > msWatershed || ts < -msWatershed {
		sec, extra = ts/1000, (ts%1000)*1000
		if extra < 0 {
			sec--
			extra += microsInSec
		}
	}
	total := int64(micro) + extra
	if total > math.MaxUint32 {
		return datetime{}, errTooLarge // speedate's TimeTooLarge; never shown
	}
	sec += total / microsInSec
	total %= microsInSec
	switch {
	case sec < unix0000:
		return datetime{}, errTooSmall
	case sec > unix9999:
		return datetime{}, errTooLarge
	}
	t := time.Unix(sec, total*1000).UTC()
	return datetime{
		year: t.Year(), month: int(t.Month()), day: t.Day(),
		hour: t.Hour(), minute: t.Minute(), second: t.Second(), micro: int(total),
		offset: utc(),
	}, ""
}

// strAsDatetime parses a string as pydantic does: as an RFC 3339-like
// datetime or a unix timestamp, and failing that as a date (at midnight),
// reporting the date's error. fromDate marks errors of the date attempt.
func strAsDatetime(s string) (dt datetime, msg string, fromDate bool) {
	if dt, ok := parseDatetime(s); ok {
		return dt, "", false
	}
	if dt, msg, ok := strTimestamp(s); ok && msg == "" {
		return dt, "", false
	}
	d, msg := parseDate(s)
	if msg == "" {
		return d, "", false
	}
	if v, ok := intParseBytes(s); ok {
		if _, tmsg := fromTimestamp(v, 0); tmsg != "" {
			msg = tmsg
		}
	}
	return datetime{}, msg, true
}

// strTimestamp is the number branch of speedate's
// DateTime::parse_bytes_with_config. ok is false when s is not a number.
func strTimestamp(s string) (datetime, string, bool) {
	if v, ok := intParseBytes(s); ok {
		dt, msg := fromTimestamp(v, 0)
		return dt, msg, true
	}
	f, ok := lexicalFloat(s)
	if !ok {
		return datetime{}, "", false
	}
	if math.Abs(f) > msWatershed {
		f /= 1000
	}
	sec := saturateInt64(math.Floor(f))
	dt, msg := fromTimestamp(sec, saturateUint32(math.Round((f-float64(sec))*1e6)))
	return dt, msg, true
}

// intParseBytes is speedate's int_parse_bytes, wrapping overflow checks
// included.
func intParseBytes(s string) (int64, bool) {
	v, bad := intParseInternal(s)
	return v, bad < 0
}

// intParseInternal returns the value, or in bad the byte that stopped it
// (256 for empty input; -1 when there was none).
func intParseInternal(s string) (int64, int) {
	if s == "" {
		return 0, 256
	}
	neg, i := false, 0
	if len(s) >= 2 && (s[0] == '-' || s[0] == '+') {
		neg, i = s[0] == '-', 1
	}
	if !isDigit(s[i]) {
		return 0, int(s[i])
	}
	v := int64(s[i] - '0')
	for i++; i < len(s); i++ {
		v *= 10
		if !isDigit(s[i]) {
			return 0, int(s[i])
		}
		if v += int64(s[i] - '0'); v < 0 {
			return 0, int(s[i])
		}
	}
	if neg {
		v = -v
	}
	return v, -1
}

// lexicalFloat parses s as speedate does when the integer parse stopped at
// a '.': Rust's float syntax, signs and exponents allowed.
func lexicalFloat(s string) (float64, bool) {
	if _, bad := intParseInternal(s); bad != '.' {
		return 0, false
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDigit(s[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == exp {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f, true
}

// parseDatetime is speedate's parse_bytes_rfc3339 for a DateTime.
func parseDatetime(s string) (datetime, bool) {
	dt, msg := parseDatePartial(s)
	if msg != "" || len(s) < 11 {
		return dt, false
	}
	switch s[10] {
	case 'T', 't', ' ', '_':
	default:
		return dt, false
	}
	end, ok := parseTime(s, 11, &dt)
	return dt, ok && end == len(s)
}

// parseDate is speedate's Date::parse_bytes_rfc3339: a date at midnight.
func parseDate(s string) (datetime, string) {
	d, msg := parseDatePartial(s)
	if msg == "" && len(s) > 10 {
		msg = errExtra
	}
	return d, msg
}

// twoDigits returns the number in s[i:i+2], or false.
func twoDigits(s string, i int) (int, bool) {
	if i+2 > len(s) || !isDigit(s[i]) || !isDigit(s[i+1]) {
		return 0, false
	}
	return int(s[i]-'0')*10 + int(s[i+1]-'0'), true
}

// parseDatePartial parses the YYYY-MM-DD at the start of s.
func parseDatePartial(s string) (datetime, string) {
	var d datetime
	if len(s) < 10 {
		return d, errTooShort
	}
	for _, c := range []byte(s[:4]) {
		if !isDigit(c) {
			return d, errYear
		}
		d.year = d.year*10 + int(c-'0')
	}
	var ok bool
	switch {
	case s[4] != '-':
		return d, errDateSep
	case !isDigit(s[5]) || !isDigit(s[6]):
		return d, errMonth
	case s[7] != '-':
		return d, errDateSep
	case !isDigit(s[8]) || !isDigit(s[9]):
		return d, errDay
	}
	d.month, _ = twoDigits(s, 5)
	d.day, ok = twoDigits(s, 8)
	if !ok || d.month < 1 || d.month > 12 {
		return d, errMonthRange
	}
	if d.day < 1 || d.day > daysIn(d.year, d.month) {
		return d, errDayRange
	}
	return d, ""
}

func daysIn(year, month int) int {
	switch month {
	case 4, 6, 9, 11:
		return 30
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 31
}

// parseTime parses HH:MM[:SS[.ffffff]][Z|±HH[:]MM] at s[i:] into dt and
// returns the offset after it.
func parseTime(s string, i int, dt *datetime) (int, bool) {
	if len(s)-i < 5 || s[i+2] != ':' {
		return 0, false
	}
	var ok1, ok2 bool
	dt.hour, ok1 = twoDigits(s, i)
	dt.minute, ok2 = twoDigits(s, i+3)
	if !ok1 || !ok2 || dt.hour > 23 || dt.minute > 59 {
		return 0, false
	}
	i += 5
	if i < len(s) && s[i] == ':' {
		var ok bool
		if dt.second, ok = twoDigits(s, i+1); !ok || dt.second > 59 {
			return 0, false
		}
		i += 3
		if i < len(s) && (s[i] == '.' || s[i] == ',') {
			i++
			start := i
			for ; i < len(s) && isDigit(s[i]); i++ {
				if i-start < 6 {
					dt.micro = dt.micro*10 + int(s[i]-'0')
				}
			}
			if i == start {
				return 0, false
			}
			for k := i - start; k < 6; k++ {
				dt.micro *= 10
			}
		}
	}
	return parseOffset(s, i, dt)
}

// parseOffset parses an optional timezone offset at s[i:].
func parseOffset(s string, i int, dt *datetime) (int, bool) {
	if i >= len(s) {
		return i, true
	}
	sign := 1
	switch {
	case s[i] == 'Z' || s[i] == 'z':
		dt.offset = utc()
		return i + 1, true
	case s[i] == '+':
		i++
	case s[i] == '-':
		sign, i = -1, i+1
	case len(s) >= i+3 && s[i:i+3] == "\u2212":
		sign, i = -1, i+3
	default:
		return 0, false
	}
	h, ok := twoDigits(s, i)
	if !ok {
		return 0, false
	}
	i += 2
	if i < len(s) && s[i] == ':' {
		i++
	}
	m, ok := twoDigits(s, i)
	if !ok || h > 23 || m > 59 {
		return 0, false
	}
	off := sign * (h*3600 + m*60)
	dt.offset = &off
	return i + 2, true
}
