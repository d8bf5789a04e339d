#!/usr/bin/env bash
# Build Tabrelay.app and Tabrelay-<version>.dmg on macOS: PyInstaller, code signing with the
# hardened runtime, notarization and stapling. Run from anywhere; outputs go to dist/.
#
#   installers/macos/build.sh                 # unsigned (ad-hoc) app and dmg, for this Mac only
#   TABRELAY_CODESIGN_IDENTITY="Developer ID Application: Name (TEAMID)" \
#   TABRELAY_NOTARY_PROFILE=tabrelay-notary installers/macos/build.sh
#
# One-time setup for a signed build (docs/install.md, "Building the installers"):
#   - a "Developer ID Application" certificate in the login keychain
#     (security find-identity -v -p codesigning lists it);
#   - notarization credentials stored once under a profile name:
#     xcrun notarytool store-credentials tabrelay-notary --apple-id ID --team-id TEAMID
#     (it asks for an app-specific password).
# The names must match installers/product.py; tests/unit/test_installers.py checks them.
set -euo pipefail

APP_NAME="Tabrelay"
BUNDLE_ID="app.tabrelay.Tabrelay"
EXECUTABLE="Tabrelay"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PYTHON" ] || { python3 -m venv "$ROOT/.venv" && PYTHON="$ROOT/.venv/bin/python"; }
SPEC="installers/pyinstaller/tabrelay.spec"
ENTITLEMENTS="installers/macos/entitlements.plist"
IDENTITY="${TABRELAY_CODESIGN_IDENTITY:-}"
NOTARY_PROFILE="${TABRELAY_NOTARY_PROFILE:-}"
VERSION="$("$PYTHON" -c 'import sys; sys.path.insert(0, "installers"); import product; print(product.version())')"
APP="dist/$APP_NAME.app"
DMG="dist/$APP_NAME-$VERSION.dmg"
WORK="build/macos"

say() { printf '\n==> %s\n' "$*"; }
fail() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

[ "$(uname -s)" = Darwin ] || fail "this script builds the macOS app; run it on a Mac"
if [ -n "$NOTARY_PROFILE" ] && [ -z "$IDENTITY" ]; then
  fail "notarization needs a signed app: set TABRELAY_CODESIGN_IDENTITY too"
fi

say "1/6 PyInstaller: $APP ($VERSION)"
"$PYTHON" -m pip install --quiet -e ".[dist]"  # PyInstaller, pinned by pyproject's dist extra
# With TABRELAY_CODESIGN_IDENTITY set, the spec has PyInstaller sign every binary with the
# hardened runtime and the entitlements, then the bundle; without it, ad-hoc.
export TABRELAY_CODESIGN_IDENTITY="$IDENTITY"
"$PYTHON" -m PyInstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller "$SPEC"

say "2/6 Check the bundle"
PLIST="$APP/Contents/Info.plist"
plist() { /usr/libexec/PlistBuddy -c "Print :$1" "$PLIST"; }
[ "$(plist CFBundleIdentifier)" = "$BUNDLE_ID" ] || fail "bundle id is not $BUNDLE_ID"
[ "$(plist CFBundleExecutable)" = "$EXECUTABLE" ] || fail "executable is not $EXECUTABLE"
[ "$(plist CFBundleShortVersionString)" = "$VERSION" ] || fail "version is not $VERSION"
[ "$(plist LSUIElement)" = "true" ] || fail "LSUIElement is not set: the app would show in the Dock"
"$APP/Contents/MacOS/$EXECUTABLE" --version | grep -qx "tabrelay $VERSION" \
  || fail "the bundle's tabrelay --version does not say $VERSION"

say "3/6 Code signature"
if [ -n "$IDENTITY" ]; then
  # Sign the outer bundle once more so its seal covers the final Info.plist and resources.
  codesign --force --sign "$IDENTITY" --options runtime --timestamp \
    --entitlements "$ENTITLEMENTS" "$APP"
  codesign --verify --deep --strict --verbose=2 "$APP"
  codesign --display --verbose=2 "$APP" 2>&1 | grep -q "flags=0x10000(runtime)" \
    || fail "the app is not signed with the hardened runtime"
else
  echo "No TABRELAY_CODESIGN_IDENTITY: ad-hoc signed; Gatekeeper blocks it on other Macs."
fi

notarize() {  # notarize FILE: submit, wait, and fail unless Apple accepted it
  local file="$1" result="$WORK/notary-$(basename "$1").plist"
  xcrun notarytool submit "$file" --keychain-profile "$NOTARY_PROFILE" --wait \
    --output-format plist > "$result"
  local status
  status="$(/usr/libexec/PlistBuddy -c 'Print :status' "$result")"
  if [ "$status" != "Accepted" ]; then
    local id
    id="$(/usr/libexec/PlistBuddy -c 'Print :id' "$result")"
    xcrun notarytool log "$id" --keychain-profile "$NOTARY_PROFILE" >&2 || true
    fail "notarization of $file: $status"
  fi
}

rm -rf "$WORK"
mkdir -p "$WORK"
say "4/6 Notarize and staple the app"
if [ -n "$NOTARY_PROFILE" ]; then
  ditto -c -k --keepParent "$APP" "$WORK/$APP_NAME.zip"
  notarize "$WORK/$APP_NAME.zip"
  xcrun stapler staple "$APP"
  xcrun stapler validate "$APP"
else
  echo "No TABRELAY_NOTARY_PROFILE: not notarized."
fi

say "5/6 Disk image: $DMG"
STAGE="$WORK/dmg"
mkdir -p "$STAGE"
ditto "$APP" "$STAGE/$APP_NAME.app"
ln -s /Applications "$STAGE/Applications"
rm -f "$DMG"
hdiutil create -volname "$APP_NAME $VERSION" -srcfolder "$STAGE" -fs HFS+ -format UDZO \
  -imagekey zlib-level=9 -ov "$DMG"
if [ -n "$IDENTITY" ]; then
  codesign --force --sign "$IDENTITY" --timestamp "$DMG"
fi

say "6/6 Notarize and staple the disk image"
if [ -n "$NOTARY_PROFILE" ]; then
  notarize "$DMG"
  xcrun stapler staple "$DMG"
  spctl --assess --type open --context context:primary-signature --verbose=2 "$DMG"
  spctl --assess --type execute --verbose=2 "$APP"
else
  echo "Skipped."
fi

say "Done: $APP and $DMG"
