/*
 * tests/unit/test_quantity.c - Kubernetes resource quantities.
 *
 * Expected values follow k8s.io/apimachinery resource.Quantity:
 * MilliValue() for cpu and Value() for everything else, both rounded up.
 */
#include "config.h"

#include <stdint.h>

#include "topogang/topogang.h"
#include "tap.h"

static const struct {
	const char *s;
	bool milli;
	int64_t want;
} good[] = {
	/* plain and decimal */
	{ "8", true, 8000 },
	{ "0", true, 0 },
	{ "1", false, 1 },
	{ "0.5", true, 500 },
	{ ".5", true, 500 },
	{ "5.", true, 5000 },
	{ "+2", true, 2000 },
	{ "-0", true, 0 },
	{ "0.0001", true, 1 },		/* rounds up */
	{ "1.5", false, 2 },		/* rounds up */
	{ "007", false, 7 },
	{ "100", false, 100 },
	{ "1000000000", false, 1000000000 },
	/* decimal SI */
	{ "500m", true, 500 },
	{ "1500m", true, 1500 },
	{ "100m", false, 1 },		/* 0.1 byte -> 1 */
	{ "1000m", false, 1 },
	{ "1n", true, 1 },		/* 0.000001 m -> 1 m */
	{ "1000000u", true, 1000 },
	{ "250000000n", true, 250 },
	{ "1k", false, 1000 },
	{ "2M", false, 2000000 },
	{ "3G", false, 3000000000LL },
	{ "4T", false, 4000000000000LL },
	{ "5P", false, 5000000000000000LL },
	{ "1E", false, 1000000000000000000LL },
	{ "1.5G", false, 1500000000 },
	{ "0.5k", true, 500000 },
	/* binary SI */
	{ "1Ki", false, 1024 },
	{ "32Gi", false, 34359738368LL },
	{ "16367668Ki", false, 16760492032LL },
	{ "1.5Mi", false, 1572864 },
	{ "0.5Ki", false, 512 },
	{ "1Ti", false, 1099511627776LL },
	{ "1Pi", false, 1125899906842624LL },
	{ "1Ei", false, 1152921504606846976LL },
	{ "7Ei", false, 8070450532247928832LL },
	{ "0.001Ki", false, 2 },	/* 1.024 -> 2 */
	{ "1Mi", true, 1048576000 },
	/* decimal exponents */
	{ "1e3", false, 1000 },
	{ "1E3", false, 1000 },
	{ "1e+3", false, 1000 },
	{ "1e-3", true, 1 },
	{ "15e-1", true, 1500 },
	{ "2.5e2", false, 250 },
	{ "1e18", false, 1000000000000000000LL },
	{ "1e-100", true, 1 },		/* tiny but not zero: rounds up */
	{ "0e999999", false, 0 },
	/* limits */
	{ "9223372036854775807", false, INT64_MAX },
	{ "9223372036854775807m", false, 9223372036854776LL },
	{ "9223372036854775.807", true, INT64_MAX },
};

static const struct {
	const char *s;
	bool milli;
} bad[] = {
	{ "", false },
	{ "8x", true },
	{ "x", false },
	{ "-1", false },
	{ "-0.5", true },
	{ "-1Gi", false },
	{ ".", false },
	{ "1..2", false },
	{ "1.2.3", false },
	{ "1e", false },
	{ "1e+", false },
	{ "1e3.5", false },
	{ "1ki", false },		/* lower-case binary suffix */
	{ "1KI", false },
	{ "1 Gi", false },
	{ " 1", false },
	{ "1 ", false },
	{ "1Gib", false },
	{ "Gi", false },
	{ "0x10", false },
	{ "1,5", false },
	{ "9223372036854775808", false },	/* 2^63 */
	{ "9223372036854775807", true },	/* x1000 overflows */
	{ "8Ei", false },			/* 2^63 */
	{ "1e19", false },
	{ "1e999999", false },
	{ "99999999999999999999999999999999", false },
	{ "NaN", false },
	{ "Inf", false },
};

int main(void)
{
	size_t i;
	char longs[200];

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int64_t v = -42;
		tg_err err = tg_k8s_quantity(good[i].s, good[i].milli, &v);

		is_int(err, TG_OK, "'%s'%s parses", good[i].s,
		       good[i].milli ? " (milli)" : "");
		is_int(v, good[i].want, "'%s'%s = %lld", good[i].s,
		       good[i].milli ? " (milli)" : "",
		       (long long)good[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int64_t v = -42;

		is_int(tg_k8s_quantity(bad[i].s, bad[i].milli, &v), TG_EINVAL,
		       "'%s'%s is rejected", bad[i].s,
		       bad[i].milli ? " (milli)" : "");
		is_int(v, -42, "'%s': output untouched on error", bad[i].s);
	}
	/* bounded length: 128 characters at most */
	memset(longs, '0', sizeof(longs));
	longs[127] = '1';
	longs[128] = '\0';
	{
		int64_t v = 0;

		is_int(tg_k8s_quantity(longs, false, &v), TG_OK,
		       "128 characters with leading zeros parse");
		is_int(v, 1, "... to 1");
		longs[128] = '1';
		longs[129] = '\0';
		is_int(tg_k8s_quantity(longs, false, &v), TG_EINVAL,
		       "129 characters are rejected");
	}
	is_int(tg_k8s_quantity(NULL, false, NULL), TG_EINVAL,
	       "NULL arguments are rejected");
	return done_testing();
}
