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
}

int pbng_signals_received(void) { return (int)received; }
