/*
 * tcg2.h - EFI_TCG2_PROTOCOL, the firmware interface to a TPM 2.0,
 * which gnu-efi does not declare: the calls this loader makes to measure
 * into PCRs and to fetch the event log, and the configuration-table GUIDs
 * around the log.
 */
#ifndef EFI_TCG2_H
#define EFI_TCG2_H

#include <efi.h>

#define EFI_TCG2_PROTOCOL_GUID \
	{ 0x607f766c, 0x7455, 0x42be, { 0x93, 0x0b, 0xe4, 0xd7, 0x6d, 0xb2, 0x72, 0x0f } }
#define EFI_TCG2_FINAL_EVENTS_TABLE_GUID \
	{ 0x1e2ed096, 0x30e2, 0x4254, { 0xbd, 0x89, 0x86, 0x3b, 0xbe, 0xf8, 0x23, 0x25 } }
/* the table Linux's EFI stub installs and the kernel reads (tpm_read_log_efi) */
#define LINUX_EFI_TPM_EVENT_LOG_GUID \
	{ 0xb7799cb0, 0xeca2, 0x4943, { 0x96, 0x67, 0x1f, 0xae, 0x07, 0xb7, 0x47, 0xfa } }

#define EFI_TCG2_EVENT_LOG_FORMAT_TCG_2 0x00000002
#define EFI_TCG2_EVENT_HEADER_VERSION   1

typedef struct {
	UINT8 Major;
	UINT8 Minor;
} EFI_TCG2_VERSION;

/* natural alignment (36 bytes), as firmware declares it */
typedef struct {
	UINT8 Size;
	EFI_TCG2_VERSION StructureVersion;
	EFI_TCG2_VERSION ProtocolVersion;
	UINT32 HashAlgorithmBitmap;
	UINT32 SupportedEventLogs;
	BOOLEAN TPMPresentFlag;
	UINT16 MaxCommandSize;
	UINT16 MaxResponseSize;
	UINT32 ManufacturerID;
	UINT32 NumberOfPcrBanks;
	UINT32 ActivePcrBanks;
} EFI_TCG2_BOOT_SERVICE_CAPABILITY;

#pragma pack(push, 1)


typedef struct {
	UINT32 HeaderSize;
	UINT16 HeaderVersion;
	UINT32 PCRIndex;
	UINT32 EventType;
} EFI_TCG2_EVENT_HEADER;

typedef struct {
	UINT32 Size;
	EFI_TCG2_EVENT_HEADER Header;
	UINT8 Event[1];
} EFI_TCG2_EVENT;

/* the event data of an EV_EVENT_TAG record */
typedef struct {
	UINT32 EventId;
	UINT32 EventSize;
	UINT8 Event[1];
} TCG_PC_CLIENT_TAGGED_EVENT;

/* the configuration table of LINUX_EFI_TPM_EVENT_LOG_GUID */
typedef struct {
	UINT32 Size;
	UINT32 FinalEventsPrebootSize;
	UINT8 Version;
	UINT8 Log[];
} LINUX_EFI_TPM_EVENTLOG;

/* EFI_TCG2_FINAL_EVENTS_TABLE */
typedef struct {
	UINT64 Version;
	UINT64 NumberOfEvents;
	UINT8 Event[];
} EFI_TCG2_FINAL_EVENTS_TABLE;
#pragma pack(pop)

struct _EFI_TCG2_PROTOCOL;

typedef EFI_STATUS(EFIAPI *EFI_TCG2_GET_CAPABILITY)(struct _EFI_TCG2_PROTOCOL *This,
						     EFI_TCG2_BOOT_SERVICE_CAPABILITY *Cap);
typedef EFI_STATUS(EFIAPI *EFI_TCG2_GET_EVENT_LOG)(struct _EFI_TCG2_PROTOCOL *This,
						    UINT32 Format,
						    EFI_PHYSICAL_ADDRESS *Location,
						    EFI_PHYSICAL_ADDRESS *LastEntry,
						    BOOLEAN *Truncated);
typedef EFI_STATUS(EFIAPI *EFI_TCG2_HASH_LOG_EXTEND_EVENT)(struct _EFI_TCG2_PROTOCOL *This,
							    UINT64 Flags,
							    EFI_PHYSICAL_ADDRESS Data,
							    UINT64 DataLen,
							    EFI_TCG2_EVENT *Event);

typedef struct _EFI_TCG2_PROTOCOL {
	EFI_TCG2_GET_CAPABILITY GetCapability;
	EFI_TCG2_GET_EVENT_LOG GetEventLog;
	EFI_TCG2_HASH_LOG_EXTEND_EVENT HashLogExtendEvent;
	VOID *SubmitCommand;
	VOID *GetActivePcrBanks;
	VOID *SetActivePcrBanks;
	VOID *GetResultOfSetActivePcrBanks;
} EFI_TCG2_PROTOCOL;

#endif
