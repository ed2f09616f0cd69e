/* libplug.so: the library p_dlopen loads at run time. */
int plug_value(void)
{
	return 7;
}
