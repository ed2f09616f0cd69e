/*
 * ui_keys.c - the key map: vi and arrow keys mean the same motions in
 * every pane; a key goes to the help overlay or a prompt first, then to
 * the keys that work anywhere, then to the pane with the keyboard.
 */
#include "ui.h"
#include "ui_export.h"
#include "ui_replay.h"
#include "ui_search.h"

#include <string.h>

enum ui_key_action ui_keys_motion(int key)
{
	switch (key) {
	case KEY_UP: case 'k': return UI_K_UP;
	case KEY_DOWN: case 'j': return UI_K_DOWN;
	case KEY_PPAGE: case UI_CTRL('b'): return UI_K_PGUP;
	case KEY_NPAGE: case UI_CTRL('f'): return UI_K_PGDN;
	case KEY_HOME: case 'g': return UI_K_HOME;
	case KEY_END: case 'G': return UI_K_END;
	case KEY_LEFT: case 'h': return UI_K_LEFT;
	case KEY_RIGHT: case 'l': return UI_K_RIGHT;
	case '\r': case '\n': case KEY_ENTER: case ' ': return UI_K_TOGGLE;
	default: return UI_K_NONE;
	}
}

static bool live(const struct ui *u)
{
	return u->src != NULL && !u->st.ended && !u->detached;
}

static void ask_quit(struct ui *u)
{
	if (live(u)) {
		u->prompt = UI_PROMPT_QUIT;
		u->dirty |= UI_D_HINT;
	} else {
		u->quit = true;
	}
}

static void quit_prompt_key(struct ui *u, int key)
{
	u->prompt = UI_PROMPT_NONE;
	u->dirty |= UI_D_HINT;
	if (key == 'y' || key == 'Y')
		u->quit = true;
	else
		ui_status_note(u, "still watching %s", u->label);
}

/* `/`: every key typed searches again from where the search began. */
static void search_prompt_key(struct ui *u, int key)
{
	struct ui_where *w = &u->where;

	if (key == 27 || key == UI_CTRL('c') || key == UI_CTRL('g')) {
		u->prompt = UI_PROMPT_NONE;
		if (w->search_from != PC_RES_NONE) {
			w->cur_id = w->search_from;
			w->stale = true;
		}
	} else if (key == '\r' || key == '\n' || key == KEY_ENTER) {
		u->prompt = UI_PROMPT_NONE;
	} else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (w->qlen > 0)
			w->query[--w->qlen] = '\0';
		ui_where_search(u, +1, false);
	} else if (key >= 0x20 && key < 0x7f &&
		   w->qlen + 1 < sizeof(w->query)) {
		w->query[w->qlen++] = (char)key;
		w->query[w->qlen] = '\0';
		ui_where_search(u, +1, false);
	}
	u->dirty |= UI_D_HINT | UI_D_PANE(UI_PANE_WHERE);
}

static bool global_key(struct ui *u, int key)
{
	switch (key) {
	case 'q': case UI_CTRL('c'): ask_quit(u); return true;
	case '?': ui_help_open(u); return true;
	case '\t': ui_layout_next_pane(u, +1); return true;
	case KEY_BTAB: ui_layout_next_pane(u, -1); return true;
	case 'S': ui_shot_key(u); return true;
	case 'E': ui_export_start(u); return true;
	case UI_CTRL('l'):
		u->force_full = true;
		u->dirty = UI_D_ALL;
		return true;
	case UI_CTRL('z'): ui_screen_suspend(u); return true;
	default:
		break;
	}
	if (key >= '1' && key < '1' + UI_NPANES) {
		ui_layout_select_pane(u, (enum ui_pane)(key - '1'));
		return true;
	}
	return false;
}

static void dispatch(struct ui *u, int key);

/* Every key; then the status line's search state word follows what the
 * key did (the Search pane's header says the same). */
void ui_keys_press(struct ui *u, int k)
{
	dispatch(u, k);
	ui_search_sync_state(u);
}

static void dispatch(struct ui *u, int key)
{
	if (key == KEY_RESIZE)
		return;  /* the signalfd's SIGWINCH does the work */
	if (u->help.up) {
		if (ui_help_key(u, key))
			return;   /* scrolled */
		u->help.up = false;
		u->dirty = UI_D_ALL;
		return;
	}
	if (ui_export_active(u))
		return ui_export_key(u, key);   /* E's menu and file name */
	if (u->prompt == UI_PROMPT_QUIT)
		return quit_prompt_key(u, key);
	if (u->prompt == UI_PROMPT_SEARCH)
		return search_prompt_key(u, key);
	if (u->prompt == UI_PROMPT_PANE && ui_layout_pane_ops(u->active)->key) {
		ui_layout_pane_ops(u->active)->key(u, key);
		return;
	}
	if (u->message[0] != '\0') {
		u->message[0] = '\0';
		u->dirty |= UI_D_HINT;
	}
	if (u->replay != NULL && ui_replay_key(u, key))
		return;   /* the replay's time controls (ui_replay.c) */
	if (global_key(u, key))
		return;
	if (ui_layout_pane_ops(u->active)->key != NULL)
		ui_layout_pane_ops(u->active)->key(u, key);
	u->dirty |= UI_D_HINT;
}
