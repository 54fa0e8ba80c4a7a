/* demo_echo.c -- an echo server and two clients in one process.
 *
 * Each client talks to the server over its own socketpair, so the demo needs
 * no network.  Every step is a callback that the loop runs when select()
 * says an fd is ready:
 *   client writable -> send the next message, then wait for the echo
 *   server readable -> read, write the same bytes back (or see EOF, hang up)
 *   client readable -> print the echo; send the next message or close
 * The loop stops when the server has no client left.
 */
#define _POSIX_C_SOURCE 200809L
#include "loop.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NCLIENTS 2

struct client {
    int id;
    int fd;          /* the client's end of its socketpair */
    int server_fd;   /* the server's end */
    const char **messages;
    int next;        /* index of the next message to send */
};

static int clients_left = NCLIENTS;

static void die(loop_t *loop, const char *what)
{
    fprintf(stderr, "demo_echo: %s: %s\n", what, loop_error(loop));
    exit(1);
}

/* @region server */
static void server_readable(loop_t *loop, void *arg)
{
    struct client *c = arg;
    char buf[64];
    ssize_t n = read(c->server_fd, buf, sizeof buf);
    if (n > 0) {
        printf("server: %zd bytes from client %d, echoing them\n", n, c->id);
        if (write(c->server_fd, buf, (size_t)n) != n)
            perror("server write");
        return;
    }
    printf("server: client %d hung up\n", c->id);
    loop_remove_reader(loop, c->server_fd);
    close(c->server_fd);
    if (--clients_left == 0) {
        printf("server: no clients left, stopping the loop\n");
        loop_stop(loop);
    }
}
/* @end server */

static void client_readable(loop_t *loop, void *arg);

/* @region client */
static void client_writable(loop_t *loop, void *arg)
{
    struct client *c = arg;
    const char *msg = c->messages[c->next++];
    printf("client %d: sends \"%s\"\n", c->id, msg);
    if (write(c->fd, msg, strlen(msg)) < 0)
        perror("client write");
    /* Nothing more to write until the echo comes back. */
    loop_remove_writer(loop, c->fd);
    if (loop_add_reader(loop, c->fd, client_readable, c) < 0)
        die(loop, "add_reader");
}

static void client_readable(loop_t *loop, void *arg)
{
    struct client *c = arg;
    char buf[64];
    ssize_t n = read(c->fd, buf, sizeof buf);
    if (n <= 0)
        return;
    printf("client %d: got \"%.*s\" back\n", c->id, (int)n, buf);
    loop_remove_reader(loop, c->fd);
    if (c->messages[c->next] != NULL) {
        if (loop_add_writer(loop, c->fd, client_writable, c) < 0)
            die(loop, "add_writer");
    } else {
        printf("client %d: done, closing\n", c->id);
        close(c->fd);
    }
}
/* @end client */

int main(int argc, char **argv)
{
    static const char *script1[] = {"hello", "how are you?", NULL};
    static const char *script2[] = {"ping", NULL};
    struct client clients[NCLIENTS] = {
        {.id = 1, .messages = script1},
        {.id = 2, .messages = script2},
    };

    loop_t *loop = loop_new();
    if (loop == NULL) {
        perror("loop_new");
        return 1;
    }
    /* --backend=NAME (chapter 07): the same program on another selector. */
    if (argc > 1 && strncmp(argv[1], "--backend=", 10) == 0 &&
        loop_set_backend(loop, argv[1] + 10) < 0) {
        fprintf(stderr, "%s: %s\n", argv[0], loop_error(loop));
        return 2;
    }
    /* @region main */
    for (int i = 0; i < NCLIENTS; i++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
            perror("socketpair");
            return 1;
        }
        clients[i].fd = sv[0];
        clients[i].server_fd = sv[1];
        if (loop_add_reader(loop, sv[1], server_readable, &clients[i]) < 0 ||
            loop_add_writer(loop, sv[0], client_writable, &clients[i]) < 0)
            die(loop, "register");
    }
    if (loop_run_forever(loop) < 0)
        die(loop, "run_forever");
    /* @end main */
    loop_close(loop);
    loop_free(loop);
    return 0;
}
