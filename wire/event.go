package wire

type Event struct {
	// Event Name.
	Name string `json:"name,omitempty"`
	// Unique identifier of the cluster this event relates to.
	ClusterID *string `json:"cluster_id,omitempty"`
	// Unique identifier of the host this event relates to.
	HostID *string `json:"host_id,omitempty"`
	// Unique identifier of the infra-env this event relates to.
	InfraEnvID *string       `json:"infra_env_id,omitempty"`
	Severity   EventSeverity `json:"severity"`
	Category   EventCategory `json:"category,omitempty"`
	Message    string        `json:"message"`
	EventTime  DateTime      `json:"event_time"`
	// Unique identifier of the request that caused this event to occur.
	RequestID string `json:"request_id,omitempty"`
	// Additional properties for the event in JSON format.
	Props string `json:"props,omitempty"`
}

type EventList []*Event

type Error struct {
	// Indicates the type of this object. Will always be 'Error'.
	Kind ErrorKind `json:"kind"`
	// Numeric identifier of the error.
	ID int32 `json:"id"`
	// Self link.
	Href string `json:"href"`
	// Globally unique code of the error, composed of the unique identifier of the API and the numeric identifier of the error. For example, if the numeric identifier of the error is 93 and the identifier...
	Code string `json:"code"`
	// Human-readable description of the error.
	Reason string `json:"reason"`
}

type InfraError struct {
	// Numeric identifier of the error.
	Code int32 `json:"code"`
	// Human-readable description of the error.
	Message string `json:"message"`
}

type LogsProgressParams struct {
	// The state of collecting logs.
	LogsState LogsState `json:"logs_state"`
}

type EventSeverity string

const (
	EventSeverityInfo     EventSeverity = "info"
	EventSeverityWarning  EventSeverity = "warning"
	EventSeverityError    EventSeverity = "error"
	EventSeverityCritical EventSeverity = "critical"
)

type EventCategory string

const (
	EventCategoryUser    EventCategory = "user"
	EventCategoryMetrics EventCategory = "metrics"
)

type ErrorKind string

const (
	ErrorKindError ErrorKind = "Error"
)

type LogsType string

const (
	LogsTypeHost       LogsType = "host"
	LogsTypeController LogsType = "controller"
	LogsTypeAll        LogsType = "all"
	LogsTypeEmpty      LogsType = ""
)
