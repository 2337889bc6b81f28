from django.urls import path

app_name = "projects"
urlpatterns: list = []
