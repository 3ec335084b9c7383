// Placeholder so the module builds before its first source lands; removed when it does.
