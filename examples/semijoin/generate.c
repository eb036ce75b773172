/*
 * examples/semijoin/generate.c -- two tables in the style of TPC-H's ORDERS
 * and LINEITEM, as CSV, from a fixed seed.
 *
 *     semijoin_generate [--orders N] [--seed S] DIR
 *
 * writes DIR/orders.csv and DIR/lineitem.csv (no header line):
 *
 *   orders:   orderkey,custkey,orderstatus,totalprice,orderdate,orderpriority,clerk,comment
 *   lineitem: orderkey,partkey,suppkey,linenumber,quantity,extendedprice,discount,tax,
 *             returnflag,linestatus,shipdate,commitdate,receiptdate,shipinstruct,shipmode,comment
 *
 * As in TPC-H, order keys are sparse (of each 32 consecutive numbers only
 * the first 8 are used, so a key that is not an order's looks like one),
 * each order has 1 to 7 line items (4 on average), order dates are uniform
 * over 1992-01-01 .. 1998-08-02, priorities uniform over 1-URGENT ..
 * 5-LOW, and a line item ships 1 to 121 days after its order.  The comments
 * are random words, so rows have about TPC-H's sizes: 108 bytes per order
 * and 129 per line item.  The default, 1,500,000 orders (TPC-H's scale
 * factor 1), gives 6,001,787 line items: 162 MB + 772 MB of CSV.
 *
 * The generator is a SplitMix64 sequence from --seed (default 1), so the
 * same arguments write the same bytes on every machine.  This is not the
 * TPC-H dbgen (whose text and distributions are richer); it keeps the shape
 * that matters to a semi-join: key sparsity, fan-out and row sizes.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t random_state;

/* SplitMix64 (Steele, Lea, Flood 2014): a full-period 64-bit sequence. */
static uint64_t next_random(void)
{
    uint64_t z = (random_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [low, high]. */
static long uniform(long low, long high)
{
    return low + (long)(next_random() % (uint64_t)(high - low + 1));
}

/* Day number (0 = 1992-01-01) -> "YYYY-MM-DD". */
static void format_date(long day, char out[24])
{
    static const int month_days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    int year = 1992;
    for (;;) {
        int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        if (day < 365 + leap)
            break;
        day -= 365 + leap;
        year++;
    }
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    int month = 0;
    while (day >= month_days[month] + (month == 1 ? leap : 0)) {
        day -= month_days[month] + (month == 1 ? leap : 0);
        month++;
    }
    /* The narrow types bound each field's width for the compiler's
     * truncation check: years fit 16 bits, months and days 8. */
    snprintf(out, 24, "%04hu-%02hhu-%02hhu", (unsigned short)year, (unsigned char)(month + 1),
             (unsigned char)(day + 1));
}

#define LAST_ORDER_DAY 2405 /* 1998-08-02 */

static const char *const words[] = {
    "furiously", "carefully", "quickly",   "slyly",        "blithely",  "ironic",      "final",
    "pending",   "regular",   "express",   "special",      "bold",      "even",        "silent",
    "unusual",   "deposits",  "accounts",  "packages",     "requests",  "theodolites", "pinto",
    "beans",     "foxes",     "ideas",     "instructions", "platelets", "asymptotes",  "courts",
    "dolphins",  "sleep",     "wake",      "haggle",       "nag",       "use",         "boost",
    "affix",     "detect",    "integrate",
};

static void write_comment(FILE *out, int word_count)
{
    for (int i = 0; i < word_count; i++)
        fprintf(out, "%s%s", i ? " " : "",
                words[next_random() % (sizeof words / sizeof words[0])]);
}

static const char *const priorities[] = { "1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED",
                                          "5-LOW" };
static const char *const ship_modes[] = { "REG AIR", "AIR",  "RAIL", "SHIP",
                                          "TRUCK",   "MAIL", "FOB" };
static const char *const instructions[] = { "DELIVER IN PERSON", "COLLECT COD", "NONE",
                                            "TAKE BACK RETURN" };

/* TPC-H's sparse keys: 8 used, then 24 unused, from 1. */
static uint64_t order_key(uint64_t index) { return index / 8 * 32 + index % 8 + 1; }

/* One order and its line items; returns 0, or -1 on a write error. */
static int write_order(FILE *orders, FILE *lineitem, uint64_t index, uint64_t order_count)
{
    uint64_t key = order_key(index);
    long order_day = uniform(0, LAST_ORDER_DAY);
    int lines = (int)uniform(1, 7);
    char order_date[24], ship_date[24], commit_date[24], receipt_date[24];
    format_date(order_day, order_date);
    long total_cents = 0;
    int shipped = 0;
    for (int line = 1; line <= lines; line++) {
        long quantity = uniform(1, 50);
        long part = uniform(1, (long)(order_count / 7.5) + 1);
        long price_cents = quantity * (90000 + part % 20001);
        long ship_day = order_day + uniform(1, 121);
        format_date(ship_day, ship_date);
        format_date(order_day + uniform(30, 90), commit_date);
        format_date(ship_day + uniform(1, 30), receipt_date);
        bool is_shipped = ship_day <= 2360; /* before 1998-06-17, TPC-H's "current date" */
        shipped += is_shipped;
        total_cents += price_cents;
        fprintf(lineitem,
                "%" PRIu64 ",%ld,%ld,%d,%ld,%ld.%02ld,0.%02ld,0.%02ld,%c,%c,%s,%s,%s,%s,%s,",
                key, part, uniform(1, (long)(order_count / 150) + 1), line, quantity,
                price_cents / 100, price_cents % 100, (long)uniform(0, 10), (long)uniform(0, 8),
                is_shipped ? "RA"[uniform(0, 1)] : 'N', is_shipped ? 'F' : 'O', ship_date,
                commit_date, receipt_date, instructions[uniform(0, 3)],
                ship_modes[uniform(0, 6)]);
        write_comment(lineitem, (int)uniform(2, 6));
        fputc('\n', lineitem);
    }
    char status = shipped == lines ? 'F' : shipped == 0 ? 'O' : 'P';
    fprintf(orders, "%" PRIu64 ",%ld,%c,%ld.%02ld,%s,%s,Clerk#%09ld,", key,
            uniform(1, (long)(order_count / 10) + 1), status, total_cents / 100,
            total_cents % 100, order_date, priorities[uniform(0, 4)],
            uniform(1, (long)(order_count / 1500) + 1));
    write_comment(orders, (int)uniform(3, 9));
    fputc('\n', orders);
    return ferror(orders) || ferror(lineitem) ? -1 : 0;
}

static FILE *open_output(const char *directory, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", directory, name);
    FILE *file = fopen(path, "w");
    if (file == NULL)
        fprintf(stderr, "semijoin_generate: cannot write %s: %s\n", path, strerror(errno));
    return file;
}

static int usage(void)
{
    fprintf(stderr, "usage: semijoin_generate [--orders N] [--seed S] DIR\n");
    return 2;
}

int main(int argc, char **argv)
{
    uint64_t order_count = 1500000, seed = 1;
    const char *directory = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--orders") == 0 && i + 1 < argc)
            order_count = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (argv[i][0] != '-' && directory == NULL)
            directory = argv[i];
        else
            return usage();
    }
    if (directory == NULL || order_count == 0)
        return usage();
    random_state = seed;
    FILE *orders = open_output(directory, "orders.csv");
    FILE *lineitem = orders ? open_output(directory, "lineitem.csv") : NULL;
    int result = orders && lineitem ? 0 : 1;
    for (uint64_t i = 0; result == 0 && i < order_count; i++)
        result = write_order(orders, lineitem, i, order_count);
    if (orders && fclose(orders) != 0)
        result = 1;
    if (lineitem && fclose(lineitem) != 0)
        result = 1;
    if (result != 0)
        fprintf(stderr, "semijoin_generate: write error\n");
    else
        printf("semijoin_generate: %" PRIu64 " orders (seed %" PRIu64 ") in %s\n", order_count,
               seed, directory);
    return result != 0;
}
