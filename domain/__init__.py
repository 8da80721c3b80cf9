"""What every layer shares and none owns: the domain errors and the stored timestamps."""
