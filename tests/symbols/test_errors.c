#include "sym_util.h"
int main(void){return tap_done();}
