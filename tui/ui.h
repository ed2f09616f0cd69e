/*
 * ui.h - the ncurses dashboard: one context, the panes, and the
 * functions each ui_*.c file offers the others.
 *
 * The dashboard is drawn on stdscr only, each pane inside a rectangle of
 * it: no subwindows, so a resize is a new set of rectangles and nothing
 * can be left over from the old size.  ncurses keeps what is on the
 * terminal and sends only the cells that differ (wnoutrefresh/doupdate);
 * on top of that, a pane is drawn again only when its `dirty` bit is set.
 *
 * One thread, one loop (DESIGN §1): ui_session.c polls the terminal, a
 * signalfd, a timerfd tick and the program's output pipes.  Nothing here
 * waits for the target.
 */
#ifndef UI_H
#define UI_H

#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pc_config.h"
#include "pc_res.h"
#include "src_live.h"

struct pc_consult;
struct ui_replay;
struct ui_search_view;   /* the Search pane's own state (ui_search.c) */
struct ui_findings;      /* the findings strip's (ui_findings.c) */
struct ui_consult;       /* the live search's session (ui_consult.h) */

/* The panes, in the order of their number keys (1..6). */
enum ui_pane {
	UI_PANE_SEARCH,
	UI_PANE_WHERE,
	UI_PANE_HIST,
	UI_PANE_TUNABLES,
	UI_PANE_HYP,
	UI_PANE_LOG,
	UI_NPANES,
};

/* Regions that can be drawn again on their own (bits of ui.dirty). */
enum {
	UI_D_STATUS = 1u << 0,
	UI_D_FOCUS  = 1u << 1,
	UI_D_HINT   = 1u << 2,
	UI_D_PANES  = 1u << 3,   /* + pane number: 1u << (3 + pane) */
	UI_D_FIND   = 1u << 12,  /* the findings strip (ui_findings.c) */
	UI_D_ALL    = 0xffffu,
};
#define UI_D_PANE(p) (1u << (3 + (p)))

/* Colour pairs; in monochrome every one is 0 and attributes and marker
 * characters carry the meaning. */
enum ui_color {
	UI_C_STATUS = 1,
	UI_C_TITLE,
	UI_C_HUNCH,     /* hunch's own messages */
	UI_C_STDERR,    /* the program's stderr */
	UI_C_MATCH,     /* search match */
	UI_C_DIM,       /* retired resources, empty-pane text */
	UI_C_WARN,
	UI_C_FOCUS,     /* resources in the focus */
};

struct ui_rect {
	int y, x, h, w;
};

/* Line drawing and markers: UTF-8 when the locale is, ASCII otherwise. */
struct ui_glyphs {
	const char *open, *closed, *leaf;  /* tree: expanded, collapsed, none */
	const char *none;                  /* a field with no value yet */
	const char *ellipsis;
	const char *focus;                 /* marks a resource in the focus */
	const char *hline;
	const char *up, *down;             /* for the key hint */
};

/* The program's output and hunch's messages (ui_log.c). */
enum ui_log_kind { UI_LOG_HUNCH, UI_LOG_STDOUT, UI_LOG_STDERR };

struct ui_log_line {
	double t;                /* seconds since the session started */
	enum ui_log_kind kind;
	char *text;              /* sanitised: printable, no control bytes */
};

struct ui_log {
	struct ui_log_line *lines;  /* ring of `cap` lines */
	size_t cap, first, n;
	size_t scroll;              /* lines up from the end; 0 follows */
	int fd[2];                  /* read ends of stdout, stderr; -1 */
	char *part[2];              /* an unfinished line per stream */
	size_t npart[2];
	uint64_t bytes[2];          /* bytes read per stream */
};

/* How the log pane showed the log last (ui_log.c): apart from the log
 * itself, which a replay's seek makes again. */
struct ui_log_view {
	size_t shown;               /* lines the wrapped pane showed: a page */
	bool top;                   /* Home: the first line at the top */
};

/* The `?` overlay (ui_help.c). */
struct ui_help {
	bool up;                    /* it is up */
	int top;                    /* its first line shown */
};

/* A one-line prompt inside a pane: text typed so far (ui_line.c). */
struct ui_line {
	char text[64];
	size_t len;
};

#define UI_HIST_MAX 10      /* curves at once, as Paradyn's rthist */

/* A curve of the Histograms pane: the user's choice of metric and focus
 * (view state, kept as names) and the instance that shows it in the
 * current search (0: not enabled in it yet). */
struct ui_hist_curve {
	int inst;
	bool recorded;   /* replay: enabled by hand in the recording */
	char *metric;
	char *path[PC_NHIER];
};

/* The Histograms pane (ui_hist.c). */
struct ui_hist {
	const struct pc_consult *pc;   /* the search the instances belong to */
	struct ui_hist_curve c[UI_HIST_MAX];
	int n, sel;
	bool phase;                    /* the current phase's histograms */
};

/* The Tunables pane (ui_tunables.c). */
struct ui_tunables {
	const struct pc_consult *pc;
	size_t sel;                 /* index among the visible tunables */
	size_t top;
	bool dev;                   /* developer tunables shown */
	bool editing;
	struct ui_line line;
	char msg[256];              /* the last edit's outcome */
	bool msg_err;
};

/* The Hypotheses pane (ui_hyp.c). */
struct ui_hyp {
	const struct pc_consult *pc;
	size_t top;                 /* first row shown */
	char file[4096];            /* the file being edited */
	char *backup;               /* its text before the first edit */
	bool made;                  /* the edit made the file (x removes it) */
	char **err;                 /* the loader's errors; n > 0: pending */
	size_t nerr;
	char msg[256];
	bool msg_err;
	bool saved;                 /* say where the file is, and its use */
};

/* `E`'s menu and file-name prompt in the hint line (ui_export.c). */
struct ui_export_prompt {
	int stage;                  /* 0 none, 1 the menu, 2 the file name */
	int kind;                   /* enum ui_export_kind */
	char name[4096];
	size_t len;
};

/* The where pane's picker (ui_pick.c): what it lists (0: it is closed),
 * the item chosen and the first one shown. */
struct ui_pick {
	int kind;
	size_t sel, top;
};

/* One visible row of the where pane. */
struct ui_row {
	pc_res_id id;
	int depth;
};

/* Children of a module or source file, sorted by name (cached until
 * the node gains children). */
struct ui_kids {
	pc_res_id *ids;
	size_t n;
};

struct ui_where {
	uint8_t *flags;             /* per resource id: UI_W_* */
	struct ui_kids *kids;       /* per resource id */
	size_t nflags;
	pc_res_id *order;           /* every resource in display order */
	uint32_t *opos;             /* position of an id in `order` */
	size_t norder;
	bool order_stale;
	struct ui_row *rows;        /* the visible tree, flattened */
	size_t nrows, caprows;
	bool stale;                 /* rows must be rebuilt */
	size_t cur, top;            /* cursor row, first row shown */
	pc_res_id cur_id;           /* keeps the cursor on its resource */
	pc_res_id search_from;      /* cursor when `/` was pressed */
	int page;                   /* rows shown last time */
	bool show_retired;
	char query[128];            /* `/` search text */
	size_t qlen;
	bool query_failed;
	size_t seen;                /* resources in the tree last time */
};

/* What the consultant will report; empty until the search exists. */
struct ui_search_status {
	bool have;                  /* false: "no search yet" */
	double sample_hz;
	double cost, cost_limit;    /* fraction of the program's time */
	int active, pending;
	const char *state;
};

/* UI_PROMPT_PANE: the active pane reads a line of its own (a value, a
 * choice); every key goes to it, digits and `q` included. */
enum ui_prompt { UI_PROMPT_NONE, UI_PROMPT_QUIT, UI_PROMPT_SEARCH,
		 UI_PROMPT_PANE };

struct ui {
	/* terminal */
	SCREEN *scr;
	FILE *tty_out, *tty_in;
	bool color, utf8;
	int rows, cols;
	const struct ui_glyphs *g;
	unsigned dirty;
	bool force_full;            /* next frame repaints every cell */
	/* layout */
	bool wide;                  /* several panes side by side */
	enum ui_pane active;        /* pane with the keyboard */
	enum ui_pane main_pane;     /* compact: shown pane; wide: right */
	struct ui_rect r_status, r_focus, r_hint, r_pane[UI_NPANES];
	bool shown[UI_NPANES];
	/* The findings strip (ui_findings.c): over the log strip, in a live
	 * session with a search; r_find.h is 0 when it is not shown. */
	bool find_on;
	struct ui_rect r_find;
	enum ui_prompt prompt;
	struct ui_help help;        /* the `?` overlay */
	char message[160];          /* one-off note in the hint line */
	/* session */
	struct pc_source *src;
	struct pc_restree *tree;
	struct src_live_status st;
	const char *label;
	pid_t pid;
	bool launched;              /* we started it (else attached) */
	bool detached;
	bool starting;              /* before the program is stopped at main */
	double t0, t_end;           /* monotonic seconds; t_end when it ended */
	int shown_second;           /* elapsed second on screen */
	struct ui_search_status search;
	/* The search this dashboard shows: made in ui_session.c for a live
	 * session (over the live source) and in ui_replay.c for a replay
	 * (over the replay source); NULL until it starts.  Panes read it and
	 * never call the engine (tui/README.md, "Hooks"). */
	struct pc_consult *pc;
	struct ui_replay *replay;   /* NULL on a live session (ui_replay.c) */
	/* Each pane's own state, reached through this dashboard only (as
	 * tmux's window modes keep theirs in wme->data): two dashboards in
	 * one process, or a replay beside a live one, share none of it.
	 * Zeroed, each is its pane's start; the two pointers are made by
	 * their file on first use.  ui_panes_free frees what they hold. */
	struct ui_where where;
	struct ui_log log;
	struct ui_log_view log_view;
	struct ui_hist hist;
	struct ui_tunables tunables;
	struct ui_hyp hyp;
	struct ui_pick pick;
	struct ui_export_prompt export_prompt;
	struct ui_search_view *search_view;
	struct ui_findings *findings;
	/* The live session's consultant, journal and resource watch (owned
	 * by ui_session.c's loop, set by ui_consult_open); NULL in a
	 * replay and once it is closed. */
	struct ui_consult *consult;
	pc_res_id focus[4];         /* per hierarchy (Code, Process, ...) */
	const char *shot_path;      /* --screenshot FILE */
	unsigned shots;             /* screenshots written by `S` */
	bool quit;
};

/* ui_screen.c */
int ui_screen_init(struct ui *u);            /* <0: no usable terminal */
/* The same on any terminal type and streams (the benchmark's /dev/null);
 * term NULL: $TERM. */
int ui_screen_init_on(struct ui *u, const char *term, FILE *out, FILE *in);
void ui_screen_end(struct ui *u);
void ui_screen_resize(struct ui *u);         /* after SIGWINCH */
void ui_screen_suspend(struct ui *u);        /* Ctrl-Z; returns after fg */
attr_t ui_screen_attr(const struct ui *u, enum ui_color c);
/* Write UTF-8 text at (y, x), at most w columns; control bytes and, in
 * ASCII mode, bytes >= 0x80 show as '?'.  Returns the columns used. */
int ui_screen_put(struct ui *u, int y, int x, int w, const char *s, attr_t a);
void ui_screen_clear_rect(struct ui *u, const struct ui_rect *r);
/* Columns the UTF-8 string takes (as ui_screen_put would draw it). */
int ui_screen_width(const struct ui *u, const char *s);
/* Bytes of the longest prefix of s that fits w columns. */
size_t ui_screen_fit(const struct ui *u, const char *s, int w);
double ui_screen_now(void);

/* A pane: its title, how it draws its body (the rectangle under its
 * title row) and the keys it takes when it has the keyboard.  The table
 * of panes is in ui_layout.c; the consultant's panes will take the
 * places of the slots there (see tui/README.md, "Hooks"). */
struct ui_pane_ops {
	const char *title;
	void (*draw)(struct ui *u, enum ui_pane p, const struct ui_rect *body);
	bool (*key)(struct ui *u, int key);  /* NULL: no keys of its own */
	const char *hint;  /* key hint; with "%s%s": the up/down glyphs */
};
extern const struct ui_pane_ops ui_where_pane, ui_log_pane;
extern const struct ui_pane_ops ui_search_slot, ui_hist_slot;
extern const struct ui_pane_ops ui_tunables_slot, ui_hyp_slot;
/* The consultant's panes, each taking its slot's place in ui_layout.c:
 * ui_search.c, ui_hist.c, ui_tunables.c, ui_hyp.c. */
extern const struct ui_pane_ops ui_search_pane, ui_hist_pane;
extern const struct ui_pane_ops ui_tunables_pane, ui_hyp_pane;

/* ui_layout.c */
const struct ui_pane_ops *ui_layout_pane_ops(enum ui_pane p);
void ui_layout(struct ui *u);
void ui_layout_draw(struct ui *u); /* what is dirty, then doupdate */
void ui_layout_select_pane(struct ui *u, enum ui_pane p);
void ui_layout_next_pane(struct ui *u, int dir);

/* ui_status.c */
void ui_status_draw(struct ui *u);
/* Whole seconds since the start (to the end once the program ended). */
long ui_status_elapsed_s(const struct ui *u);
void ui_status_draw_focus(struct ui *u);
void ui_status_draw_hint(struct ui *u);
/* The state word of the status line ("running", "exited 0", ...). */
void ui_status_state_text(const struct ui *u, char *buf, size_t len);
void ui_status_focus_text(const struct ui *u, char *buf, size_t len);
void ui_status_note(struct ui *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ui_where.c */
void ui_where_init(struct ui_where *w);
void ui_where_free(struct ui_where *w);
void ui_where_changed(struct ui *u);         /* the tree grew or changed */
bool ui_where_key(struct ui *u, int key);
void ui_where_search(struct ui *u, int dir, bool from_next);
/* Rebuild the visible rows now (the benchmark times it). */
void ui_where_rebuild(struct ui *u);
void ui_where_expand_all(struct ui *u);

/* ui_log.c */
void ui_log_init(struct ui_log *l, size_t cap);
void ui_log_free(struct ui_log *l);
void ui_log_add(struct ui *u, enum ui_log_kind k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Read what a pipe has; returns false at end of file. */
bool ui_log_read(struct ui *u, int stream);
bool ui_log_key(struct ui *u, int key);


/* ui_help.c */
void ui_help_draw(struct ui *u);
void ui_help_open(struct ui *u);
/* A key while the help is up: true if it scrolled it (it stays up). */
bool ui_help_key(struct ui *u, int key);

/* ui_keys.c */
enum ui_key_action {
	UI_K_NONE, UI_K_UP, UI_K_DOWN, UI_K_PGUP, UI_K_PGDN, UI_K_HOME,
	UI_K_END, UI_K_LEFT, UI_K_RIGHT, UI_K_TOGGLE,
};
enum ui_key_action ui_keys_motion(int key);
void ui_keys_press(struct ui *u, int key);
#define UI_CTRL(c) ((c) & 0x1f)

/* ui_shot.c */
int ui_shot_write(struct ui *u, const char *path);
void ui_shot_key(struct ui *u);

#endif
