; Tabrelay for Windows: a per-user Inno Setup 6 installer of the PyInstaller bundle.
;
; Build on Windows after `make dist` (or the same pyinstaller command), from the repository:
;   iscc installers\windows\tabrelay.iss          -> dist\Tabrelay-<version>-setup.exe
; Sign both the executables and the setup with signtool before publishing (docs/install.md).
;
; Per user, no administrator rights: the bundle goes to %LOCALAPPDATA%\Programs\Tabrelay,
; which only this user can write (THREATS I1), and nothing runs elevated (THREATS I4).
; The names below must match installers/product.py and desktop/tabrelay/system/autostart.py;
; tests/unit/test_installers.py checks them.

#define AppName "Tabrelay"
#define AppVersion "0.1.0"
#define AppPublisher "Tabrelay"
#define TrayExe "tabrelay-tray.exe"
#define CliExe "tabrelay.exe"
#define BundleDir "..\..\dist\tabrelay"
#define RunKey "Software\Microsoft\Windows\CurrentVersion\Run"
#define RunValue "Tabrelay"

[Setup]
; The AppId identifies this app to upgrades and the uninstaller: never change it.
AppId={{18179CB3-0ABE-4FEA-83BD-32311246FB10}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher={#AppPublisher}
VersionInfoVersion={#AppVersion}
VersionInfoProductName={#AppName}
VersionInfoDescription={#AppName} setup
PrivilegesRequired=lowest
DefaultDirName={localappdata}\Programs\{#AppName}
DisableDirPage=yes
DisableProgramGroupPage=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir=..\..\dist
OutputBaseFilename={#AppName}-{#AppVersion}-setup
SetupIconFile=tabrelay.ico
UninstallDisplayIcon={app}\{#TrayExe}
UninstallDisplayName={#AppName}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
; A running Tabrelay holds its files: the Restart Manager closes it before an upgrade.
CloseApplications=yes
RestartApplications=no

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "autostart"; Description: "Start {#AppName} when I sign in"; Flags: unchecked
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#TrayExe}"; Comment: "Let AI agents use your open browser, with you in control"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#TrayExe}"; Tasks: desktopicon

[Registry]
; The same value the tray's "Start at login" writes (autostart.py RUN_VALUE), so either can
; turn it off. The uninstaller removes it whoever wrote it ([Code] below).
Root: HKCU; Subkey: "{#RunKey}"; ValueType: string; ValueName: "{#RunValue}"; ValueData: """{app}\{#TrayExe}"""; Flags: uninsdeletevalue; Tasks: autostart

[Run]
Filename: "{app}\{#TrayExe}"; Description: "Start {#AppName} now"; Flags: nowait postinstall skipifsilent

[UninstallRun]
; Stop this user's Tabrelay (the tray, and a headless one an MCP client started) so its
; files can be removed. taskkill only reaches processes this user may end.
Filename: "{sys}\taskkill.exe"; Parameters: "/F /T /IM {#TrayExe}"; Flags: runhidden; RunOnceId: "StopTray"
Filename: "{sys}\taskkill.exe"; Parameters: "/F /T /IM {#CliExe}"; Flags: runhidden; RunOnceId: "StopCli"

[Code]
// Settings, the command log, logs and the file secret store live in the platformdirs folders
// (%LOCALAPPDATA%\Tabrelay; %APPDATA%\Tabrelay for a roaming profile), outside {app}.
procedure DeleteUserData();
begin
  DelTree(ExpandConstant('{localappdata}\{#AppName}'), True, True, True);
  DelTree(ExpandConstant('{userappdata}\{#AppName}'), True, True, True);
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  if CurUninstallStep = usUninstall then
  begin
    // Start at login may have been turned on from the tray rather than by this installer.
    RegDeleteValue(HKEY_CURRENT_USER, '{#RunKey}', '{#RunValue}');
  end;
  if CurUninstallStep = usPostUninstall then
  begin
    // Keep the data unless the person says otherwise; a silent uninstall keeps it.
    if (not UninstallSilent) and
       (MsgBox('Also delete your {#AppName} settings, command log and paired browsers?' + #13#10 +
               '(Keep them if you will install {#AppName} again.)',
               mbConfirmation, MB_YESNO or MB_DEFBUTTON2) = IDYES) then
      DeleteUserData();
  end;
end;
