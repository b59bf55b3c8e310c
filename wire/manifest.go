package wire

// Manifest is a cluster's custom manifest as V2ListClusterManifests lists
// it (definition "manifest").
type Manifest struct {
	// The folder that contains the files. Manifests can be placed in 'manifests' or 'openshift' directories.
	Folder ManifestFolder `json:"folder,omitempty"`
	// The file name prefaced by the folder that contains it.
	FileName string `json:"file_name,omitempty"`
	// Describes whether manifest is sourced from a user or created by the system.
	ManifestSource ManifestSource `json:"manifest_source,omitempty"`
}

// ListManifests is the definition "list-manifests".
type ListManifests []*Manifest

// CreateManifestParams is V2CreateClusterManifest's body
// ("create-manifest-params"). file_name and content are required.
type CreateManifestParams struct {
	// The folder that contains the files. Manifests can be placed in 'manifests' or 'openshift' directories.
	// Default: manifests.
	Folder ManifestFolder `json:"folder,omitempty"`
	// The name of the manifest to customize the installed OCP cluster.
	// Pattern: ManifestFileNamePattern.
	FileName string `json:"file_name"`
	// base64 encoded manifest content.
	Content string `json:"content"`
}

// UpdateManifestParams is V2UpdateClusterManifest's body
// ("update-manifest-params"). folder and file_name are required and name
// the manifest to change; the updated_ fields that are set say how.
type UpdateManifestParams struct {
	// The folder for the manifest to modify.
	Folder ManifestFolder `json:"folder"`
	// The file name for the manifest to modify.
	// Pattern: ManifestFileNamePattern.
	FileName string `json:"file_name"`
	// The new folder for the manifest. Manifests can be placed in 'manifests' or 'openshift' directories.
	UpdatedFolder *ManifestFolder `json:"updated_folder,omitempty"`
	// The new file name for the manifest.
	// Pattern: ManifestFileNamePattern.
	UpdatedFileName *string `json:"updated_file_name,omitempty"`
	// The new base64 encoded manifest content.
	UpdatedContent *string `json:"updated_content,omitempty"`
}

// ManifestFileNamePattern is the swagger's pattern for a manifest's file
// name in create-manifest-params and update-manifest-params.
const ManifestFileNamePattern = `^[^\/]*\.(json|ya?ml(\.patch_?[a-zA-Z0-9_]*)?)$`

type ManifestFolder string

const (
	ManifestFolderManifests ManifestFolder = "manifests"
	ManifestFolderOpenshift ManifestFolder = "openshift"
)

type ManifestSource string

const (
	ManifestSourceUser   ManifestSource = "user"
	ManifestSourceSystem ManifestSource = "system"
)
