"""A local SMTP server for the tests (Debian's python3-aiosmtpd): each message it accepts is written to a
folder as one JSON file, read with Python's own email package, not with what sent it.

usage: smtp_sink.py DIR PORT USER PASSWORD

With a USER (not empty), a sender must authenticate (AUTH PLAIN or LOGIN, allowed without TLS on this
loopback server) with exactly those. A file DIR/hold holding a number of seconds holds each message that
long before accepting it (a slow server). Prints
"ready" once it listens, and exits when its standard input closes: a test runner that dies takes it along.
"""

import asyncio
import json
import os
import sys
import threading
import time
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

directory, port, user, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]


def authenticate(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user and auth_data.password.decode() == password
    return AuthResult(success=ok, handled=False, auth_data=auth_data.login.decode() if ok else None)


class Sink:
    async def handle_DATA(self, server, session, envelope):
        hold = os.path.join(directory, 'hold')
        if os.path.exists(hold):
            with open(hold) as file:
                await asyncio.sleep(float(file.read()))
        raw = envelope.original_content or envelope.content
        message = message_from_bytes(raw, policy=policy.default)
        record = {
            'mail_from': envelope.mail_from,
            'rcpt_tos': envelope.rcpt_tos,
            'login': session.auth_data if session.authenticated else None,
            'from': str(message['from']),
            'to': str(message['to']),
            'subject': str(message['subject']),
            'content_type': message.get_content_type(),
            'charset': message.get_content_charset(),
            'parts': sum(1 for _ in message.walk()),
            'body': message.get_content(),
            'raw': raw.decode('utf-8', 'replace'),
        }
        name = os.path.join(directory, f'{time.time_ns()}')
        with open(name + '.tmp', 'w') as file:
            json.dump(record, file)
        os.rename(name + '.tmp', name + '.json')
        return '250 OK'


options = {'authenticator': authenticate, 'auth_required': True, 'auth_require_tls': False} if user else {}
controller = Controller(Sink(), hostname='127.0.0.1', port=port, **options)
controller.start()
print('ready', flush=True)


def watch_stdin():
    sys.stdin.read()
    os._exit(0)


threading.Thread(target=watch_stdin, daemon=True).start()
threading.Event().wait()
