// (placeholder: filled by the issue-33 work)
