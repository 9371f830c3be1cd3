#!/usr/bin/env bash
# Prints the Debian package's /usr/share/doc/cordon/copyright (machine-readable, DEP-5) on stdout:
# Cordon itself, the Swift runtime and Foundation (linked in statically, --static-swift-stdlib),
# and every SwiftPM dependency in .build/checkouts (compiled into the binaries), with the licence
# found in its LICENSE file. Run by scripts/make-deb.sh after a build.
set -euo pipefail
cd "$(dirname "$0")/.."

cat <<'EOF'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: cordon
Comment: The binaries are statically linked with the Swift runtime, Foundation
 and Dispatch, and with the SwiftPM packages listed below (BoringSSL, vendored
 by swift-crypto and swift-nio-ssl, included).

Files: *
Copyright: the Cordon authors
License: Cordon-undecided

Files: swift-runtime/*
Copyright: Apple Inc. and the Swift project authors
License: Apache-2.0 with Swift-Runtime-Library exception
EOF

expat=no
for checkout in .build/checkouts/*/; do
    name=$(basename "$checkout")
    license_file=$(find "$checkout" -maxdepth 1 -iname 'license*' -o -maxdepth 1 -iname 'copying*' | sort | head -1)
    if [ -z "$license_file" ]; then
        echo "deb-copyright: $checkout has no LICENSE file" >&2
        exit 1
    fi
    if grep -q 'Apache License' "$license_file" && grep -q 'Version 2.0' "$license_file"; then
        license=Apache-2.0
    elif grep -q 'Permission is hereby granted, free of charge' "$license_file"; then
        license=Expat
        expat=yes
    else
        echo "deb-copyright: cannot tell $license_file's licence; add it to $0" >&2
        exit 1
    fi
    holder=$(grep -m1 -ioE 'copyright (\(c\) )?[0-9][0-9, -]*[^.]*' "$license_file" "${checkout}NOTICE.txt" 2>/dev/null |
        head -1 | sed -E 's/^[^:]*://; s/^[Cc]opyright (\([cC]\) )?//') || true
    printf '\nFiles: .build/checkouts/%s/*\nCopyright: %s\nLicense: %s\n' "$name" \
        "${holder:-the $name authors}" "$license"
done

# zlib, vendored (symbols prefixed) by swift-nio-extras for NIOHTTPCompression.
zlib=.build/checkouts/swift-nio-extras/Sources/CNIOExtrasZlib
if [ -d "$zlib" ]; then
    printf '\nFiles: %s/*\nCopyright: 1995-2024 Jean-loup Gailly and Mark Adler\nLicense: Zlib\n' "$zlib"
fi

cat <<'EOF'

License: Cordon-undecided
 The Cordon repository has no LICENSE file and its README names no licence:
 the project's licence is not decided yet. Replace this paragraph with the
 licence's text (and Files: * with its short name) before the package is
 distributed beyond the organisation that builds it.

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this file except in compliance with the License. You may obtain a copy of
 the License at https://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
 WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
 License for the specific language governing permissions and limitations under
 the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0 can
 be found in "/usr/share/common-licenses/Apache-2.0".

License: Apache-2.0 with Swift-Runtime-Library exception
 Licensed under the Apache License, Version 2.0 (see above and
 "/usr/share/common-licenses/Apache-2.0"), with this exception:
 .
 As an exception, if you use this Software to compile your source code and
 portions of this Software are embedded into the binary product as a result,
 you may redistribute such product without providing attribution as would
 otherwise be required by Sections 4(a), 4(b) and 4(d) of the License.
EOF

if [ -d "$zlib" ]; then
    cat <<'EOF'

License: Zlib
 This software is provided 'as-is', without any express or implied
 warranty. In no event will the authors be held liable for any damages
 arising from the use of this software.
 .
 Permission is granted to anyone to use this software for any purpose,
 including commercial applications, and to alter it and redistribute it
 freely, subject to the following restrictions:
 .
 1. The origin of this software must not be misrepresented; you must not
    claim that you wrote the original software. If you use this software
    in a product, an acknowledgment in the product documentation would be
    appreciated but is not required.
 2. Altered source versions must be plainly marked as such, and must not be
    misrepresented as being the original software.
 3. This notice may not be removed or altered from any source distribution.
EOF
fi

if [ "$expat" = yes ]; then
    cat <<'EOF'

License: Expat
 Permission is hereby granted, free of charge, to any person obtaining a copy
 of this software and associated documentation files (the "Software"), to deal
 in the Software without restriction, including without limitation the rights
 to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
 copies of the Software, and to permit persons to whom the Software is
 furnished to do so, subject to the following conditions:
 .
 The above copyright notice and this permission notice shall be included in
 all copies or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
 IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
 FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
 AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
 LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
 OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
 SOFTWARE.
EOF
fi
