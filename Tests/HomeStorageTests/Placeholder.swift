// Placeholder until the storage tests land.
