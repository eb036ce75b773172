#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
static void t(void **s){(void)s;}
int main(void){const struct CMUnitTest tests[]={cmocka_unit_test(t)};return cmocka_run_group_tests(tests,NULL,NULL);}
