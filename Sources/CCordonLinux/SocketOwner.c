#define _GNU_SOURCE
#include "CCordonLinux.h"
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int cordon_tcp_socket_owner(int family, const uint8_t *local, uint16_t local_port, const uint8_t *remote,
                            uint16_t remote_port, uid_t *uid) {
    size_t length = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
    if (length == 0) return -EAFNOSUPPORT;
    struct {
        struct nlmsghdr header;
        struct inet_diag_req_v2 request;
    } message;
    memset(&message, 0, sizeof message);
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    // No NLM_F_DUMP: the kernel looks up exactly this socket (inet_diag_find_one_icsk).
    message.header.nlmsg_flags = NLM_F_REQUEST;
    message.header.nlmsg_seq = 1;
    message.request.sdiag_family = (uint8_t)family;
    message.request.sdiag_protocol = IPPROTO_TCP;
    message.request.idiag_states = ~0u;
    message.request.id.idiag_sport = htons(local_port);
    message.request.id.idiag_dport = htons(remote_port);
    memcpy(message.request.id.idiag_src, local, length);
    memcpy(message.request.id.idiag_dst, remote, length);
    message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;

    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -errno;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    ssize_t sent;
    do {
        sent = sendto(fd, &message, sizeof message, 0, (struct sockaddr *)&kernel, sizeof kernel);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    // One answer: the socket's inet_diag_msg (with attributes), or an error.
    long buffer[2048];
    ssize_t received;
    do {
        received = recv(fd, buffer, sizeof buffer, 0);
    } while (received < 0 && errno == EINTR);
    int error = received < 0 ? errno : 0;
    close(fd);
    if (received < 0) return -error;
    struct nlmsghdr *header = (struct nlmsghdr *)buffer;
    size_t left = (size_t)received;
    for (; NLMSG_OK(header, left); header = NLMSG_NEXT(header, left)) {
        if (header->nlmsg_type == NLMSG_ERROR) {
            struct nlmsgerr *failure = NLMSG_DATA(header);
            if (header->nlmsg_len < NLMSG_LENGTH(sizeof *failure)) return -EIO;
            return failure->error < 0 ? failure->error : -EIO;
        }
        if (header->nlmsg_type == NLMSG_DONE) break;
        if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
        if (header->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg))) return -EIO;
        struct inet_diag_msg *found = NLMSG_DATA(header);
        // The kernel answers for the socket asked about; still, take nothing else.
        if (found->idiag_family != family || found->id.idiag_sport != htons(local_port) ||
            found->id.idiag_dport != htons(remote_port) || memcmp(found->id.idiag_src, local, length) != 0 ||
            memcmp(found->id.idiag_dst, remote, length) != 0) {
            continue;
        }
        // No inode: no process holds the socket any more (closed, orphaned, or a TIME_WAIT entry,
        // for which the kernel reports uid 0). Nobody is there to speak for.
        if (found->idiag_inode == 0) return -ENOENT;
        *uid = (uid_t)found->idiag_uid;
        return 0;
    }
    return -ENOENT;
}
