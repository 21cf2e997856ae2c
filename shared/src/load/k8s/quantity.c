/*
 * shared/src/load/k8s/quantity.c - Kubernetes resource.Quantity parsing.
 *
 * The grammar (k8s.io/apimachinery pkg/api/resource/quantity.go):
 *
 *   quantity ::= [+-] number suffix
 *   number   ::= digits | digits "." digits | digits "." | "." digits
 *   suffix   ::= "" | n | u | m | k | M | G | T | P | E
 *              | Ki | Mi | Gi | Ti | Pi | Ei
 *              | ("e" | "E") [+-] digits
 *
 * The value is computed exactly on a decimal digit string (no floating
 * point): the significant digits, a power of ten and a power of two.  The
 * result is rounded up, as Kubernetes' ScaledValue() does, so "1n" of cpu is
 * 1 millicore and "0.5" bytes of memory is 1 byte.
 */
#include "config.h"

#include <string.h>

#include "internal.h"

/* Longest quantity text accepted; Kubernetes has no such limit but no
 * real quantity comes near it. */
#define QTY_MAX_LEN	128
/* Largest decimal exponent magnitude considered; beyond it a non-zero
 * value either overflows or rounds up to 1. */
#define QTY_MAX_EXP	100

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses the suffix into a power of ten and a power of two. */
static bool parse_suffix(const char *s, int *e10, int *e2)
{
	static const struct {
		const char *sfx;
		int e10, e2;
	} tab[] = {
		{ "", 0, 0 },	{ "n", -9, 0 },	 { "u", -6, 0 },
		{ "m", -3, 0 }, { "k", 3, 0 },	 { "M", 6, 0 },
		{ "G", 9, 0 },	{ "T", 12, 0 },	 { "P", 15, 0 },
		{ "E", 18, 0 }, { "Ki", 0, 10 }, { "Mi", 0, 20 },
		{ "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 },
		{ "Ei", 0, 60 },
	};
	size_t i;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(s, tab[i].sfx) == 0) {
			*e10 = tab[i].e10;
			*e2 = tab[i].e2;
			return true;
		}
	}
	/* Decimal exponent: e3, E-2, e+6. */
	if (*s == 'e' || *s == 'E') {
		bool neg = false;
		int v = 0;

		s++;
		if (*s == '+' || *s == '-')
			neg = *s++ == '-';
		if (!*s)
			return false;
		for (; *s; s++) {
			if (!is_digit(*s))
				return false;
			if (v <= 100000)
				v = v * 10 + (*s - '0');
		}
		*e10 = neg ? -v : v;
		*e2 = 0;
		return true;
	}
	return false;
}

tg_err tg_k8s_quantity(const char *s, bool milli, int64_t *out)
{
	char dig[QTY_MAX_LEN + 32];	/* significant digits, then x 2^e2 */
	size_t n = 0, len, i;
	const char *p;
	bool neg = false, any = false, point = false;
	int frac = 0, e10, e2;
	long exp;
	uint64_t v;

	if (!s || !out)
		return TG_EINVAL;
	len = strlen(s);
	if (len == 0 || len > QTY_MAX_LEN)
		return TG_EINVAL;
	p = s;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	/* The number: digits with at most one point. */
	for (; *p; p++) {
		if (is_digit(*p)) {
			any = true;
			if (n == 0 && *p == '0') {
				/* leading zero: only shifts the point */
				if (point)
					frac++;
				continue;
			}
			dig[n++] = *p;
			if (point)
				frac++;
		} else if (*p == '.' && !point) {
			point = true;
		} else {
			break;
		}
	}
	if (!any)
		return TG_EINVAL;
	if (!parse_suffix(p, &e10, &e2))
		return TG_EINVAL;
	/* Trailing zeros of the significant digits go into the exponent. */
	while (n > 0 && dig[n - 1] == '0') {
		n--;
		frac--;
	}
	if (n == 0) {
		*out = 0;
		return TG_OK;
	}
	if (neg)
		return TG_EINVAL;
	exp = (long)e10 - frac + (milli ? 3 : 0);

	/* Multiply the digit string by 2^e2 (at most 2^60: 19 more digits). */
	for (; e2 > 0; e2--) {
		int carry = 0;

		for (i = n; i-- > 0;) {
			int d = (dig[i] - '0') * 2 + carry;

			dig[i] = (char)('0' + d % 10);
			carry = d / 10;
		}
		if (carry) {
			memmove(dig + 1, dig, n);
			dig[0] = (char)('0' + carry);
			n++;
		}
	}
	/* value = dig * 10^exp */
	if (exp >= 0) {
		if (exp > QTY_MAX_EXP || (size_t)exp + n > 19)
			return TG_EINVAL;
		v = 0;
		for (i = 0; i < n + (size_t)exp; i++) {
			unsigned d = i < n ? (unsigned)(dig[i] - '0') : 0;

			if (v > (UINT64_MAX - d) / 10)
				return TG_EINVAL;
			v = v * 10 + d;
		}
	} else {
		size_t nint;
		bool rest = false;

		if (-exp >= (long)n) {
			*out = 1;	/* 0 < value < 1: rounds up to 1 */
			return TG_OK;
		}
		nint = n - (size_t)(-exp);
		if (nint > 19)
			return TG_EINVAL;
		v = 0;
		for (i = 0; i < nint; i++) {
			unsigned d = (unsigned)(dig[i] - '0');

			if (v > (UINT64_MAX - d) / 10)
				return TG_EINVAL;
			v = v * 10 + d;
		}
		for (; i < n; i++)
			if (dig[i] != '0')
				rest = true;
		if (rest)
			v++;
	}
	if (v > (uint64_t)INT64_MAX)
		return TG_EINVAL;
	*out = (int64_t)v;
	return TG_OK;
}
