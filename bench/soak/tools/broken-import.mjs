// Imported by the soak tool's "import" fault: fails while it is imported.
throw new Error('soak: this module cannot be imported');
