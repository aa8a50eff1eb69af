#include "app/signals.h"
#include <signal.h>
#include <string.h>

/* The one process-wide variable of pbng: a signal handler can only set a flag of this type. */
static volatile sig_atomic_t received;

static void on_signal(int sig) { received = sig; }

void pbng_signals_install(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGUSR1, &sa, NULL);
  /* A file-size limit (ulimit -f, a batch system's file limit) would kill the process with SIGXFSZ and
   * leave a stale .partial; ignored, the write fails with EFBIG and the run ends with an I/O error
   * like on a full disk (output removed, earlier result untouched). */
  signal(SIGXFSZ, SIG_IGN);
}

int pbng_signals_received(void) { return (int)received; }
